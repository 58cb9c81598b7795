package dev.lease.faults.scenarios.zookeeper;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link JpaZooKeeperFaultScenariosTest} against the JPA fence without the comparison: its CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class JpaZooKeeperFaultScenariosFenceMutantTest extends JpaZooKeeperFaultScenariosTest {
}
