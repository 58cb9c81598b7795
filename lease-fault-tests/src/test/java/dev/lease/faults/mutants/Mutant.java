package dev.lease.faults.mutants;

import java.util.EnumMap;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import dev.lease.LeaseKind;
import dev.lease.core.BackendRouter;
import dev.lease.core.LeaseDefaults;
import dev.lease.core.LeaseEngine;
import dev.lease.core.MutantEngines;
import dev.lease.faults.harness.FaultRun;
import dev.lease.faults.harness.Seeds;
import dev.lease.faults.workload.HolderMain;
import dev.lease.faults.workload.LeaseWorker;
import dev.lease.faults.workload.Ledger;
import dev.lease.spi.GrantFence;
import dev.lease.spi.LeaseBackend;

/**
 * A deliberately broken piece of the system a fault scenario runs on, to measure the suite's detection power: a
 * scenario that passes against a mutant could not have caught that bug. {@link MutantRuns} runs a scenario class
 * against the mutants {@link MutantRuns#mutantsFor} lists (the fence mutant, in every build), or else the system property
 * {@value #PROPERTY} (the extra surefire executions of {@code -Psoak} set it); the
 * suite's building blocks ask {@link #active()} which one is on: {@link Ledger} for its fence check, the engine
 * factory {@link #engine} for the backend and the engine, {@link LeaseWorker} for its section, and {@link FaultRun}
 * passes it to child JVMs ({@link HolderMain}) in their arguments.
 */
public enum Mutant {

    /** The real thing. */
    NONE("none", "none"),
    /**
     * The resource's fence moves to every token it is shown, without comparing ({@link Ledger.Check#BROKEN}); in the
     * scheduled {@code @Once} scenario, whose fence is the key, every run records a key of its own, as if the job had
     * no {@code @Once}.
     */
    FENCE("fence", "fence without the comparison"),
    /** The backend now and then hands out an earlier grant's token again ({@link RepeatingTokenBackend}). */
    REPEATED_TOKEN("repeated-token", "backend that repeats a token"),
    /** The engine never ends a lease on its own monotonic clock ({@link MutantEngines#withoutLocalDeadline}). */
    NO_LOCAL_DEADLINE("no-local-deadline", "engine without its local deadline"),
    /** The leased section catches the loss interrupt, reports it, and writes anyway ({@link LeaseWorker}). */
    SWALLOWED_INTERRUPT("swallowed-interrupt", "section that swallows interrupts");

    static final String PROPERTY = "lease-test.mutant";

    /** Seeds {@link RepeatingTokenBackend}; printed by {@link MutantRuns} so that a run can be replayed. */
    static final long SEED = Long.getLong("lease-test.mutant-seed", 15);

    private static volatile Mutant active = NONE;

    public final String id;
    final String title;

    Mutant(String id, String title) {
        this.id = id;
        this.title = title;
    }

    /** The mutant the code under test runs with now; {@link #NONE} outside {@link MutantRuns}. */
    public static Mutant active() {
        return active;
    }

    /** Turns {@code mutant} on for whatever this JVM builds from now on. */
    public static void activate(Mutant mutant) {
        active = mutant;
    }

    /** The mutant {@value #PROPERTY} asks for; {@link #NONE} when unset. */
    static Mutant requested() {
        return of(System.getProperty(PROPERTY, NONE.id));
    }

    public static Mutant of(String id) {
        String wanted = id.trim().toLowerCase(Locale.ROOT);
        for (Mutant mutant : values()) {
            if (mutant.id.equals(wanted)) {
                return mutant;
            }
        }
        throw new IllegalArgumentException("unknown mutant '" + id + "' in " + PROPERTY + "; one of none, fence, "
                + "repeated-token, no-local-deadline, swallowed-interrupt");
    }

    /** The check a ledger really runs when a scenario asks for {@code check}. */
    public static Ledger.Check ledgerCheck(Ledger.Check check) {
        return active == FENCE ? Ledger.Check.BROKEN : check;
    }

    /** Whether the leased section of {@link LeaseWorker} swallows its loss interrupt and writes anyway. */
    public static boolean swallowsInterrupts() {
        return active == SWALLOWED_INTERRUPT;
    }

    /** {@code args} for a {@link HolderMain} child, with the active mutant added so the child runs it too. */
    public static Map<String, String> childArgs(Map<String, String> args) {
        Map<String, String> withMutant = new HashMap<>(args);
        withMutant.put("mutant", active.id);
        return withMutant;
    }

    /** Scenario names get this suffix in mutant runs, so their histories and logs do not overwrite the real runs'. */
    public static String suffix() {
        return active == NONE ? "" : "-mutant-" + active.id;
    }

    /**
     * The engine of one holder on {@code backend}, with the active mutant in it: the backend or the engine replaced
     * by its broken version when that is the mutant.
     *
     * @param grantFence the fence advanced at grant for leases that name one, or null
     */
    public static LeaseEngine engine(LeaseBackend<?> backend, LeaseKind kind, GrantFence grantFence) {
        Map<LeaseKind, LeaseBackend<?>> routes = new EnumMap<>(LeaseKind.class);
        routes.put(kind, active == REPEATED_TOKEN ? new RepeatingTokenBackend<>(backend, SEED) : backend);
        BackendRouter router = BackendRouter.of(routes);
        return active == NO_LOCAL_DEADLINE
                ? MutantEngines.withoutLocalDeadline(router, LeaseDefaults.standard(), grantFence)
                : LeaseEngine.builder(router).grantFence(grantFence).build();
    }
}
