/**
 * The tests' in-process syntheses leave nothing in the temp folder: an App of templateApp
 * writes its cloud assembly in this process's folder of them (removed when the process exits,
 * or by the next process after one ended by a signal),
 * and a template asked of stackTemplate (what the run's stack-template server runs, ended by
 * SIGKILL) is removed at once. An App given no outdir leaves a `cdk.outXXXXXX` folder in the
 * temp folder, one per synthesis.
 */
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname } from 'node:path';
import { expect, it } from 'vitest';
import { assemblyOutdir, templateApp } from '../support/cdk-app';
import { stackTemplate } from '../support/iam/stack-template';

it("an App of templateApp writes its assembly in this process's folder of assemblies, not a folder of its own in the temp folder", () => {
  const { outdir } = templateApp();
  expect(dirname(dirname(outdir))).toBe(tmpdir());
  expect(basename(dirname(outdir))).toBe(`cr-cdk-assemblies-${process.pid}`);
});

it('stackTemplate leaves no assembly behind', () => {
  const root = dirname(assemblyOutdir());
  const before = readdirSync(root).length;
  const template = stackTemplate(
    { captureBucket: 'my-captures', targets: [{ name: 'A', url: 'https://a.example.com' }] },
    'NoLeftovers',
  );
  expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
  expect(readdirSync(root)).toHaveLength(before);
  expect(existsSync(root)).toBe(true);
});
