package dev.lease.faults;

/**
 * {@link JpaZooKeeperFaultScenariosTest} against the JPA fence without the comparison: its CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class JpaZooKeeperFaultScenariosFenceMutantTest extends JpaZooKeeperFaultScenariosTest {
}
