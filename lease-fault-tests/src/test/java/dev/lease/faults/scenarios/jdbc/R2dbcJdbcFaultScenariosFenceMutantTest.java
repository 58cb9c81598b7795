package dev.lease.faults.scenarios.jdbc;

import dev.lease.faults.mutants.AgainstMutant;
import dev.lease.faults.mutants.Mutant;

/**
 * {@link R2dbcJdbcFaultScenariosTest} against an R2DBC fence without the comparison: its CORRECTNESS scenario must
 * detect it.
 */
@AgainstMutant(Mutant.FENCE)
class R2dbcJdbcFaultScenariosFenceMutantTest extends R2dbcJdbcFaultScenariosTest {
}
