// What node kinds may ask of the project while their settings are checked (src/nodes/types.ts,
// SettingsCheckContext): the meta-schema check and the ReDoS check of the user's schemas live here,
// in the loader's layer, so kinds stay free of ajv and the pattern engines.
import type { SettingsCheckContext } from '../nodes/types.js'
import type { CorsSettings } from '../model/project.js'
import { inputSchemaProblem } from './ajv.js'
import { checkPattern, schemaPatterns } from './safe-pattern.js'

export function settingsCheckContext(projectCors: CorsSettings | undefined): SettingsCheckContext {
  return {
    schemaProblem: inputSchemaProblem,
    patternProblems(schema) {
      const found: ReturnType<SettingsCheckContext['patternProblems']> = []
      for (const { path, pattern } of schemaPatterns(schema)) {
        const verdict = checkPattern(pattern)
        if (!verdict.ok) found.push({ path, severity: verdict.severity, message: verdict.message })
      }
      return found
    },
    ...(projectCors ? { projectCors } : {}),
  }
}
