# Puts Node 22 first on PATH: the major the Lambda functions run on (lib/replay-function.ts)
# and the package's floor (package.json engines), so the tests run on it whatever node the
# machine has. The machine's own node when it is that major; else the npm registry's package of
# Node's own binary (node-linux-<arch>, pinned below) installed into .ci/node/ (gitignored) once
# and its bin put first on PATH. npm is the machine's: a JavaScript program, it runs under the
# first `node` on PATH, so `npm test` and every script it starts run on that Node.
#
# Sourced by .ci/run; in a shell of your own: `source .ci/node-env.sh` (from the clone's root).
CR_NODE_MAJOR=22
CR_NODE_VERSION=22.23.5

cr_node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none; }

if [ "$(cr_node_major)" != "$CR_NODE_MAJOR" ]; then
  case "$(uname -m)" in
    x86_64 | amd64) cr_node_arch=x64 ;;
    aarch64 | arm64) cr_node_arch=arm64 ;;
    *) cr_node_arch="$(uname -m)" ;;
  esac
  cr_node_pkg="node-linux-$cr_node_arch"
  cr_node_dir="$PWD/.ci/node"
  cr_node_installed=""
  if [ -f "$cr_node_dir/node_modules/$cr_node_pkg/package.json" ]; then
    cr_node_installed="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$cr_node_dir/node_modules/$cr_node_pkg/package.json")"
  fi
  if [ "$cr_node_installed" != "$CR_NODE_VERSION" ]; then
    echo "node-env: the machine's node is $(node --version 2>/dev/null || echo absent); installing $cr_node_pkg@$CR_NODE_VERSION into .ci/node/" >&2
    mkdir -p "$cr_node_dir"
    npm install --prefix "$cr_node_dir" --no-save --no-package-lock --no-audit --no-fund --loglevel=error "$cr_node_pkg@$CR_NODE_VERSION" >&2
  fi
  export PATH="$cr_node_dir/node_modules/$cr_node_pkg/bin:$PATH"
  hash -r
  unset cr_node_arch cr_node_pkg cr_node_dir cr_node_installed
fi
if [ "$(cr_node_major)" != "$CR_NODE_MAJOR" ]; then
  echo "node-env: could not put Node $CR_NODE_MAJOR first on PATH (node is $(node --version 2>/dev/null || echo absent))" >&2
  return 1 2>/dev/null || exit 1
fi
echo "node-env: node $(node --version) ($(command -v node)), npm $(npm --version)" >&2
unset -f cr_node_major
