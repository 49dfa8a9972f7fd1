/** One choice of a {@link FilterSelect}: its value, and its label when that differs. */
export type FilterChoice = string | { value: string; label: string };

/** Rollout modes to filter by; `none` is live traffic (rollouts without a mode). */
export const MODES: readonly FilterChoice[] = ['train', 'val', 'test', { value: 'none', label: 'none (live traffic)' }];

/** A labelled filter menu whose first choice, "any", means no filter (`null`). */
export function FilterSelect({
  label,
  value,
  choices,
  onChange,
}: {
  /** Shown before the menu; the menu's accessible name is `<label> filter`. */
  label: string;
  value: string | null | undefined;
  choices: readonly FilterChoice[];
  onChange: (value: string | null) => void;
}) {
  // A chosen value stays listed even when the latest answer no longer offers it.
  const all = [...choices.map((c) => (typeof c === 'string' ? { value: c, label: c } : c))];
  if (value && !all.some((c) => c.value === value)) all.push({ value, label: value });
  return (
    <label>
      {label}
      <select aria-label={`${label} filter`} value={value ?? ''} onChange={(e) => onChange(e.target.value || null)}>
        <option value="">any</option>
        {all.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    </label>
  );
}
