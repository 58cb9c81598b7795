package dev.lease.faults.scenarios.etcd;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link EtcdNemesisTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class EtcdNemesisFenceMutantTest extends EtcdNemesisTest {
}
