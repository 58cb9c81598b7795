package dev.lease.faults.scenarios.zookeeper;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link HttpZooKeeperFaultScenariosTest} against a ledger service whose fence lost its comparison: its CORRECTNESS
 * scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class HttpZooKeeperFaultScenariosFenceMutantTest extends HttpZooKeeperFaultScenariosTest {
}
