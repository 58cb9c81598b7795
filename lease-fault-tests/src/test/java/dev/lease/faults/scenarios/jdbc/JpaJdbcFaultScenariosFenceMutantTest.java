package dev.lease.faults;

/**
 * {@link JpaJdbcFaultScenariosTest} against the JPA fence without the comparison: its CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class JpaJdbcFaultScenariosFenceMutantTest extends JpaJdbcFaultScenariosTest {
}
