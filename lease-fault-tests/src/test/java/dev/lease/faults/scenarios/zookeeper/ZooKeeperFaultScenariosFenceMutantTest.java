package dev.lease.faults.scenarios.zookeeper;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link ZooKeeperFaultScenariosTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class ZooKeeperFaultScenariosFenceMutantTest extends ZooKeeperFaultScenariosTest {
}
