package dev.lease.faults;

/**
 * Short or long fault runs: {@code ./mvnw verify} runs every scenario briefly; {@code -Psoak} sets
 * {@code lease-test.soak=true} and scenarios multiply their rounds by {@link #FACTOR}.
 */
final class Soak {

    static final boolean ON = Boolean.getBoolean("lease-test.soak");

    /** How many times more rounds a soak run does. */
    static final int FACTOR = ON ? Integer.getInteger("lease-test.soak-factor", 20) : 1;

    private Soak() {
    }

    /** {@code rounds} in a short run, {@code rounds * FACTOR} in a soak run. */
    static int rounds(int rounds) {
        return rounds * FACTOR;
    }
}
