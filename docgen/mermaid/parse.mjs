// Parses mermaid diagrams with mermaid's own parser, the one GitHub's renderer runs, without a browser: mermaid
// needs a DOM only to sanitize labels, which jsdom provides. Reads a JSON array of {"where", "text"} on stdin,
// writes a JSON array of {"where", "error"} for the diagrams that do not parse.
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

let input = '';
for await (const chunk of process.stdin) input += chunk;
const problems = [];
for (const { where, text } of JSON.parse(input)) {
  try {
    await mermaid.parse(text);
  } catch (e) {
    problems.push({ where, error: String(e?.message ?? e).split('\n').slice(0, 3).join(' ') });
  }
}
process.stdout.write(JSON.stringify(problems));
