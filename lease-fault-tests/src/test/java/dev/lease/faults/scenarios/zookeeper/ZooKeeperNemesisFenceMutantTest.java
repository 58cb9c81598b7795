package dev.lease.faults.scenarios.zookeeper;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link ZooKeeperNemesisTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class ZooKeeperNemesisFenceMutantTest extends ZooKeeperNemesisTest {
}
