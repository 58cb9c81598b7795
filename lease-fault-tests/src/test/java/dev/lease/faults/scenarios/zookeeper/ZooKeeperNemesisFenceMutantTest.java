package dev.lease.faults;

/**
 * {@link ZooKeeperNemesisTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class ZooKeeperNemesisFenceMutantTest extends ZooKeeperNemesisTest {
}
