// Evaluates simulations with @cloud-copilot/iam-simulate, an implementation of AWS's policy evaluation logic
// that this project did not write. Reads a JSON array of {id, simulation, unsafe} on stdin and writes a JSON
// array of {id, result, ignoredContextKeys, errors} on stdout. The Go test (tests/iam) builds the simulations
// from the offline render and asserts each result.
//
// unsafe: the simulation's condition keys are a provider's own (an EKS OIDC provider's "<issuer>:sub"), which
// iam-simulate's catalogue of keys does not know, so its validating runSimulation would ignore them; they are
// evaluated with runUnsafeSimulation, which takes the context as given.
import { runSimulation, runUnsafeSimulation } from '@cloud-copilot/iam-simulate';
import { createValidatedPolicy } from '@cloud-copilot/iam-policy';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const cases = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const results = [];
for (const { id, simulation, unsafe } of cases) {
  const sim = { serviceControlPolicies: [], resourceControlPolicies: [], identityPolicies: [], ...simulation };
  try {
    if (unsafe) {
      // runUnsafeSimulation loads the resource policy without a name, which its analysis needs: give it one.
      const resourcePolicy = sim.resourcePolicy && createValidatedPolicy(sim.resourcePolicy, () => [], { name: 'resource' });
      results.push({ id, result: runUnsafeSimulation({ ...sim, resourcePolicy }, { simulationMode: 'Strict' }) });
      continue;
    }
    const r = await runSimulation(sim, { simulationMode: 'Strict' });
    if (r.resultType === 'error') {
      results.push({ id, errors: JSON.stringify(r.errors) });
      continue;
    }
    const ignored = r.resultType === 'single' ? r.result.ignoredContextKeys : r.results.flatMap((x) => x.ignoredContextKeys ?? []);
    results.push({ id, result: r.overallResult, ignoredContextKeys: ignored ?? [] });
  } catch (e) {
    results.push({ id, errors: String(e && e.stack ? e.stack : e) });
  }
}
process.stdout.write(JSON.stringify(results));
