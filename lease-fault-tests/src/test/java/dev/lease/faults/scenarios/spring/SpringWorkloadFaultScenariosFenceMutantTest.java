package dev.lease.faults;

/**
 * {@link SpringWorkloadFaultScenariosTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class SpringWorkloadFaultScenariosFenceMutantTest extends SpringWorkloadFaultScenariosTest {
}
