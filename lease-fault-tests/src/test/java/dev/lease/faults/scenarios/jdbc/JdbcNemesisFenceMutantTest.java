package dev.lease.faults.scenarios.jdbc;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link JdbcNemesisTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class JdbcNemesisFenceMutantTest extends JdbcNemesisTest {
}
