package dev.lease.faults;

/**
 * {@link JdbcNemesisTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class JdbcNemesisFenceMutantTest extends JdbcNemesisTest {
}
