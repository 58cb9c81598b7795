package dev.lease.faults;

/**
 * {@link JdbcFaultScenariosTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class JdbcFaultScenariosFenceMutantTest extends JdbcFaultScenariosTest {
}
