package dev.lease.faults.scenarios.jdbc;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link JpaJdbcFaultScenariosTest} against the JPA fence without the comparison: its CORRECTNESS scenario must detect it.
 */
@AgainstMutant(Mutant.FENCE)
class JpaJdbcFaultScenariosFenceMutantTest extends JpaJdbcFaultScenariosTest {
}
