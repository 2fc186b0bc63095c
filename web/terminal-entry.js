// The browser terminal: Debian's node-xterm (xterm.js 3.8) and its fit addon, bundled by
// esbuild at build time (CMakeLists.txt) into build/web/xterm.js, which defines window.Terminal.
const { Terminal } = require('xterm');
const fit = require('xterm/lib/addons/fit/fit');
Terminal.applyAddon(fit);
window.Terminal = Terminal;
