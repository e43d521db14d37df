// ArkType compiles validators with `new Function`, which a Worker may not call while it handles a request (workerd
// allows it only at startup, where ArkType's own check runs): a Worker sets ArkType's `jitless` before it loads.
import { configure } from "arktype/config";

configure({ jitless: true });
