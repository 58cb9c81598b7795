package dev.lease.spi;

import java.time.Duration;
import java.util.Locale;

import dev.lease.Durations;

/**
 * The one rule of every backend's {@code delete-idle-after}: deleting the record of an idle lease name is safe only
 * with tokens that keep rising across its deletion and re-creation, and only after a positive idle time. A backend
 * whose default tokens restart with a re-created record (ZooKeeper's znode version, JDBC's per-name counter) names the
 * token setting that rises instead, and checks its settings with {@link #check} when it is built, so that the
 * starter's properties and a backend built by hand are refused in the same words.
 *
 * @param backend the backend's properties prefix, such as {@code lease.zookeeper}
 * @param risingTokens the value of {@code <backend>.token} under which idle records may be deleted
 * @param whyNot what goes wrong with the other token settings, for the message
 * @param records what is deleted, plural, for the message ("names", "rows")
 */
public record IdleDeletion(String backend, Enum<?> risingTokens, String whyNot, String records) {

    /**
     * Refuses idle deletion under tokens that could go back, or after an idle time that is not positive.
     *
     * @param deleteIdleAfter {@code <backend>.delete-idle-after}, null when unset
     * @param tokens {@code <backend>.token}
     * @throws Refused naming both properties and the fix
     */
    public void check(Duration deleteIdleAfter, Enum<?> tokens) {
        if (deleteIdleAfter == null) {
            return;
        }
        String property = backend + ".delete-idle-after";
        if (tokens != risingTokens) {
            throw new Refused(property + " (" + Durations.format(deleteIdleAfter) + ") needs " + backend + ".token="
                    + value(risingTokens) + ", but " + backend + ".token is '" + value(tokens) + "': " + whyNot + ".",
                    "set " + backend + ".token: " + value(risingTokens) + " on every instance (tokens keep rising "
                            + "across the switch), or remove " + property + " to keep idle " + records + ".");
        }
        if (deleteIdleAfter.isNegative() || deleteIdleAfter.isZero()) {
            throw new Refused(property + " must be positive, not " + Durations.format(deleteIdleAfter) + ".",
                    "set it to a duration such as 1h, or remove it to keep idle " + records + ".");
        }
    }

    /** An enum constant as it is written in a property: {@code PER_NAME} is {@code per-name}. */
    private static String value(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Idle deletion refused: what is wrong and how to fix it, apart, so that a configuration failure report can show
     * them as its description and action.
     */
    public static final class Refused extends IllegalArgumentException {

        private static final long serialVersionUID = 1L;

        /** What is wrong, as a sentence. */
        private final String description;

        /** How to fix it, as a sentence. */
        private final String action;

        Refused(String description, String action) {
            super(description + " Fix: " + action);
            this.description = description;
            this.action = action;
        }

        /**
         * What is wrong.
         *
         * @return the description, a sentence
         */
        public String description() {
            return description;
        }

        /**
         * How to fix it.
         *
         * @return the action, a sentence
         */
        public String action() {
            return action;
        }
    }
}
