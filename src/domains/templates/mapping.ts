// The rule for a cadence association's parameter_mapping (decisions.md "Shapes the spec leaves open"):
// keys are the template's placeholder numbers ("1", "2"…), values are text, literal or with the
// documented {{VARIABLE}}s; an unknown {{VARIABLE}} is refused.
import { invalidInput } from '../../errors.js';
import { placeholdersOf, unknownVariables } from './render.js';

const VALUE_MAX = 1000;

/**
 * The mapping to store, after checking it against the template's components (400 otherwise, the
 * message naming `label`: a send's own values are `parameters`).
 */
export function validMapping(
  mapping: Record<string, unknown> | null | undefined,
  components: unknown,
  label = 'parameter_mapping',
): Record<string, string> {
  const placeholders = placeholdersOf(components);
  const valid: Record<string, string> = {};
  for (const [key, value] of Object.entries(mapping ?? {})) {
    if (!placeholders.includes(key)) {
      const known = placeholders.length ? `os placeholders do modelo são ${placeholders.join(', ')}` : 'o modelo não tem placeholders';
      throw invalidInput(`${label}: "${key}" não é um placeholder do modelo (${known})`);
    }
    if (typeof value !== 'string') throw invalidInput(`${label}: o valor de "${key}" deve ser um texto`);
    if (value.length > VALUE_MAX) throw invalidInput(`${label}: o valor de "${key}" aceita no máximo ${VALUE_MAX} caracteres`);
    const unknown = unknownVariables(value);
    if (unknown.length) throw invalidInput(`${label}: variável desconhecida ${unknown[0]} em "${key}"`);
    valid[key] = value;
  }
  return valid;
}
