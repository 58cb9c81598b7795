package dev.lease.faults;

/**
 * {@link HttpZooKeeperFaultScenariosTest} against a ledger service whose fence lost its comparison: its CORRECTNESS
 * scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class HttpZooKeeperFaultScenariosFenceMutantTest extends HttpZooKeeperFaultScenariosTest {
}
