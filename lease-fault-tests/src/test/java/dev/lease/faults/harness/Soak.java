package dev.lease.faults.harness;

import dev.lease.faults.mutants.Mutant;
import dev.lease.faults.mutants.MutantRuns;

/**
 * Short or long fault runs: {@code ./mvnw verify} runs every scenario briefly; {@code -Psoak} sets
 * {@code lease-test.soak=true} and scenarios multiply their rounds by {@link #FACTOR}. The soak's volume comes from
 * the nemesis scenarios ({@link NemesisScenario#LENGTH}, {@link NemesisScenario#CYCLE_GOAL}); the hand-picked
 * scenarios only repeat a little, so that the whole soak, mutant runs included, stays within about 45 minutes on
 * two cores.
 */
public final class Soak {

    public static final boolean ON = Boolean.getBoolean("lease-test.soak");

    /** How many times more rounds a soak run does. */
    static final int FACTOR = ON ? Integer.getInteger("lease-test.soak-factor", 2) : 1;

    private Soak() {
    }

    /**
     * {@code rounds} in a short run, {@code rounds * FACTOR} in a soak run; {@code rounds} in a mutant run
     * ({@link MutantRuns}) even in a soak: one round that detects the mutant is enough. The mutant is on only while
     * the test method runs: call this from the test, not from {@code @BeforeAll} or a static initializer.
     */
    public static int rounds(int rounds) {
        return Mutant.active() == Mutant.NONE ? rounds * FACTOR : rounds;
    }
}
