// The package's README (what npm shows) from the repository's: the same front page for users, without what only a
// clone of the repository has. Sections between `<!-- repo-only:start -->` and `<!-- repo-only:end -->` are left out
// (the contributors' commands), and links to files of the repository become links to them on GitHub, since the
// tarball holds none of docs/, examples/ or bench/. scripts/build.mjs writes pkg/README.md with it; the docs test
// checks the tarball's copy.

/** `https://github.com/owner/name` from package.json's repository field. */
export function repositoryWeb(repository) {
  const url = typeof repository === "string" ? repository : repository?.url;
  const m = /github\.com[/:]([^/]+)\/([^/.]+)/.exec(url ?? "");
  if (!m) throw new Error(`package.json: repository ${JSON.stringify(url)} is not a GitHub repository`);
  return `https://github.com/${m[1]}/${m[2]}`;
}

export function packageReadme(text, repository) {
  const web = repositoryWeb(repository);
  const kept = text.replace(/\n?<!-- repo-only:start -->[\s\S]*?<!-- repo-only:end -->\n?/g, "\n");
  // Markdown links and images whose target is a path in the repository: ](docs/x.md#y), ](examples/a), ](LICENSE).
  return kept.replace(/\]\((?!https?:|mailto:|#)([^)\s]+)\)/g, (_, target) => {
    const path = target.replace(/^\.\//, "");
    const kind = /\.[a-z]+(#.*)?$/i.test(path) ? "blob" : "tree";
    return `](${web}/${kind}/main/${path})`;
  });
}
