// Preloaded (`node --import`) into server-everything's Streamable HTTP mode, which listens on `process.env.PORT`
// with no host (every interface) and prints no usable port for PORT=0: binds every listen without a host to
// 127.0.0.1 and reports the real port as one line `LISTENING <port>` on stderr, for the test to read.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || typeof args[0] === "string") && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  this.once("listening", () => process.stderr.write(`LISTENING ${this.address().port}\n`));
  return listen.apply(this, args);
};
