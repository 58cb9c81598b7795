package dev.lease.faults.harness;

import java.util.concurrent.ThreadLocalRandom;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The seed of a scenario's random choices: {@code -Dlease-test.seed=N} replays a run, otherwise every run draws a
 * fresh one, so that repeated runs explore different schedules. The seed is logged with the line that replays it.
 * It fixes the scenario's own choices (hold times, which fault, when); thread timing still varies, so a replay
 * reproduces the schedule, not always the failure.
 */
public final class Seeds {

    private static final Log log = LogFactory.getLog(Seeds.class);

    static final String PROPERTY = "lease-test.seed";

    private Seeds() {
    }

    /** The seed for {@code scenario}, logged. */
    public static long of(String scenario) {
        long seed = Long.getLong(PROPERTY, ThreadLocalRandom.current().nextLong());
        log.info(scenario + ": seed " + seed + " (replay with " + replay(seed) + ")");
        return seed;
    }

    /** The option that replays {@code seed}. */
    public static String replay(long seed) {
        return "-D" + PROPERTY + "=" + seed;
    }
}
