package dev.lease.faults.scenarios.spring;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link SpringWorkloadFaultScenariosTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class SpringWorkloadFaultScenariosFenceMutantTest extends SpringWorkloadFaultScenariosTest {
}
