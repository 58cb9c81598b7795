package dev.lease.faults.mutants;

import org.junit.jupiter.params.Parameter;

/**
 * What a class of fault scenarios extends: its scenarios run for real and against the fence mutant
 * ({@link AgainstMutants}), and {@link #mutant} is the mutant of the current run. Servers a class shares between its
 * scenarios are started and stopped per run ({@code @BeforeParameterizedClassInvocation},
 * {@code @AfterParameterizedClassInvocation}), so that a mutant run never sees what the real run left behind.
 */
@AgainstMutants
public abstract class FaultScenarios {

    /**
     * The mutant this run of the class is against, {@link Mutant#NONE} for the real run. The code under test asks
     * {@link Mutant#active()}, which {@link MutantRuns} turns on around each scenario.
     */
    @Parameter
    protected Mutant mutant;
}
