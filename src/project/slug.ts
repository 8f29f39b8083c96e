// Names users write become URL slugs (flows) and reference roots (nodes); SPEC §2 "Names and slugs".

/** Accents stripped (NFD), lower-cased, every run outside a-z0-9 → one `-`, hyphens trimmed. */
export function slugify(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}

/** Lower-cased, every run outside a-z0-9 → `_`: `Big Order` → `big_order`. */
export function referenceName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '_')
}
