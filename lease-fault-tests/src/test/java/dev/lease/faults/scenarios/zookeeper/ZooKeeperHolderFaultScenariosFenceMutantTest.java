package dev.lease.faults;

/**
 * {@link ZooKeeperHolderFaultScenariosTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class ZooKeeperHolderFaultScenariosFenceMutantTest extends ZooKeeperHolderFaultScenariosTest {
}
