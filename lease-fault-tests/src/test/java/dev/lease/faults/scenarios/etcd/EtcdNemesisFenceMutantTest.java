package dev.lease.faults;

/**
 * {@link EtcdNemesisTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class EtcdNemesisFenceMutantTest extends EtcdNemesisTest {
}
