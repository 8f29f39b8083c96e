// JSON string literals of the few names a project's runs repeat (node ids, kinds, names, ports),
// kept: JSON.stringify costs ~1,300 instructions even for a short string (V8 sets up its serializer
// in C++ for each call), and a recorded run writes four of them per step and two per port taken.
// Equivalence with JSON.stringify: test/flow/run-details.test.ts ("unusual names") for traces and
// test/store/rows.test.ts for the ports taken.

const literals = new Map<string, string>()
/** Names come from flow files, so the map stays small; past this it starts again rather than grow. */
const MAX_LITERALS = 10_000

/** `JSON.stringify(text)`. */
export function jsonLiteral(text: string): string {
  let json = literals.get(text)
  if (json === undefined) {
    json = JSON.stringify(text)
    if (literals.size >= MAX_LITERALS) literals.clear()
    literals.set(text, json)
  }
  return json
}
