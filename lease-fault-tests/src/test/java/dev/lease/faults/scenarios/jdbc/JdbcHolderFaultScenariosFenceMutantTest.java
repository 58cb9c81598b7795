package dev.lease.faults;

/**
 * {@link JdbcHolderFaultScenariosTest} against the fence without the comparison: each CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class JdbcHolderFaultScenariosFenceMutantTest extends JdbcHolderFaultScenariosTest {
}
