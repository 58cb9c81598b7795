package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import dev.lease.Durations;
import dev.lease.LeaseConfigurationException;

/**
 * The rule of every backend's {@code delete-idle-after}: deleting the record of an idle lease name is safe only with
 * tokens that keep rising across its deletion and re-creation, and only after a positive idle time. A backend whose
 * default tokens restart with a re-created record (ZooKeeper's znode version, JDBC's per-name counter) names the token
 * setting that rises instead; this refuses the combination at startup, in the same words for each.
 *
 * @param backend the backend's properties prefix, such as {@code lease.zookeeper}
 * @param risingTokens the value of {@code <backend>.token} under which idle records may be deleted
 * @param whyNot what goes wrong with the other token settings, for the message
 * @param records what is deleted, plural, for the message ("names", "rows")
 */
record IdleDeletion(String backend, Enum<?> risingTokens, String whyNot, String records) {

    /**
     * @param deleteIdleAfter {@code <backend>.delete-idle-after}, null when unset
     * @param tokens {@code <backend>.token}
     * @throws LeaseConfigurationException when idle records would be deleted under tokens that could go back, or the
     *         idle time is not positive
     */
    void check(@Nullable Duration deleteIdleAfter, Enum<?> tokens) {
        if (deleteIdleAfter == null) {
            return;
        }
        String property = backend + ".delete-idle-after";
        if (tokens != risingTokens) {
            throw new LeaseConfigurationException(property + " (" + Durations.format(deleteIdleAfter) + ") needs "
                    + backend + ".token=" + value(risingTokens) + ", but " + backend + ".token is '" + value(tokens)
                    + "': " + whyNot + ".", "set " + backend + ".token: " + value(risingTokens) + " on every instance "
                            + "(tokens keep rising across the switch), or remove " + property + " to keep idle "
                            + records + ".");
        }
        if (deleteIdleAfter.isNegative() || deleteIdleAfter.isZero()) {
            throw new LeaseConfigurationException(property + " must be positive, not "
                    + Durations.format(deleteIdleAfter) + ".",
                    "set it to a duration such as 1h, or remove it to keep idle " + records + ".");
        }
    }

    /** An enum constant as it is written in a property: {@code PER_NAME} is {@code per-name}. */
    private static String value(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
