/** Every file under a folder, as text: what a run wrote, for tests that look for what must not be there. */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function filesUnder(dir: string): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push({ file: path, text: readFileSync(path, 'utf8') });
    }
  };
  walk(dir);
  return out;
}
