// Flows whose Start cannot accept any request because a secret of its expected credential is unset
// or blank (fail-closed auth, SPEC §5.1/§17). A reload that leaves one so says it in the serve log
// (SPEC §21), so a `.env` edit that dropped a token is not discovered through 401s alone.
import { secretNamesIn } from '../language/secrets.js'
import type { AuthSettings, Project } from '../model/project.js'

/** Slug → the unset secrets its Start's credential needs, for every HTTP flow that refuses all requests. */
export function refusingFlows(project: Project): Map<string, string[]> {
  const refusing = new Map<string, string[]>()
  for (const flow of project.flows.values()) {
    const start = flow.start
    if (!start?.http || !start.auth) continue
    const missing = credentialTemplates(start.auth)
      .flatMap((template) => secretNamesIn(template))
      .filter((name, index, names) => names.indexOf(name) === index && (project.secrets.get(name) ?? '').trim() === '')
    if (missing.length) refusing.set(flow.slug, missing)
  }
  return refusing
}

function credentialTemplates(auth: AuthSettings): string[] {
  if (auth.type === 'bearer') return [auth.token]
  if (auth.type === 'basic') return [auth.username, auth.password]
  if (auth.type === 'apiKey') return [auth.key]
  return [auth.secret]
}

/**
 * Log lines for a reload: each flow that now refuses every request (it did not before, or it is
 * new or changed), and each that accepts requests again.
 */
export function refusalChanges(previous: Project, next: Project): string[] {
  const before = refusingFlows(previous)
  const after = refusingFlows(next)
  const projectId = next.settings.projectId
  const lines: string[] = []
  for (const [slug, names] of after) {
    const same = before.get(slug)?.join() === names.join() && previous.flows.get(slug)?.version === next.flows.get(slug)?.version
    if (same) continue
    const one = names.length === 1
    const how = one
      ? `add it to ${next.settings.secrets} or set FLOWCTL_SECRET_${names[0]}`
      : `add them to ${next.settings.secrets} or set FLOWCTL_SECRET_<NAME>`
    lines.push(
      `${projectId}: flow ${slug} refuses every request (401) until secret${one ? '' : 's'} ${names.join(', ')} ${one ? 'is' : 'are'} set: its Start's auth uses ${one ? 'it' : 'them'} (${how})`,
    )
  }
  for (const slug of before.keys()) {
    if (!after.has(slug) && next.flows.get(slug)?.start?.http) lines.push(`${projectId}: flow ${slug} accepts requests again: its Start's secrets are set`)
  }
  return lines
}
