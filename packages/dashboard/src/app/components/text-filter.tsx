import type { InputHTMLAttributes } from 'react';

/**
 * A labelled text (or number) field of a filter bar: `label` is shown before it, `name` is its accessible name, and
 * `onChange` gets the text as typed. Other input attributes (`placeholder`, `type`, `step`, `style`) pass through.
 */
export function TextFilter({
  label,
  name,
  value,
  onChange,
  ...input
}: {
  label: string;
  name: string;
  value: string;
  onChange: (text: string) => void;
} & Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange' | 'name'>) {
  return (
    <label>
      {label}
      <input aria-label={name} value={value} onChange={(e) => onChange(e.target.value)} {...input} />
    </label>
  );
}
