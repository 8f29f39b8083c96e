// Stands in for codemirror-json-schema's markdown renderer (markdown-it + shiki, megabytes): the flow
// schema's descriptions are plain sentences with `code` at most. The text is escaped first.
function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

export function renderMarkdown(markdown: string, inline = true): string {
  const html = escapeHtml(String(markdown ?? '')).replace(/`([^`]+)`/g, '<code>$1</code>')
  return inline ? html : `<p>${html.replace(/\n\n+/g, '</p><p>')}</p>`
}
