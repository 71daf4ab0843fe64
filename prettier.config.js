// Prettier, set to the style the code was written in: 2 spaces, single quotes, semicolons,
// trailing commas. 160 columns is the widest that still breaks every line over 160 it can
// (a long string or test name stays whole), and of the widths tried (100 to 160) it changes
// the fewest lines. Scope: the code (*.ts, *.js, *.mjs); `npm run format` writes it.
/** @type {import('prettier').Config} */
export default {
  printWidth: 160,
  singleQuote: true,
};
