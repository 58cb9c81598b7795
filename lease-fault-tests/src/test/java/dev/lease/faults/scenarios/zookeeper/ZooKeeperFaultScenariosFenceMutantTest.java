package dev.lease.faults;

/**
 * {@link ZooKeeperFaultScenariosTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class ZooKeeperFaultScenariosFenceMutantTest extends ZooKeeperFaultScenariosTest {
}
