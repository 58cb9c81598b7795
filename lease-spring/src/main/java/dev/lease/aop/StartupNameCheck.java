package dev.lease.aop;

import java.util.List;

import dev.lease.LeaseConfigurationException;
import dev.lease.LeaseKind;
import dev.lease.core.LeaseEngine;

/**
 * Checks the lease and election names known at startup against the rules of the backend their kind is routed to,
 * with the same check every call makes on its evaluated name ({@link LeaseEngine#validateName}): a literal name the
 * backend refuses, or a template whose literal parts alone break the backend's rules, would fail every call, so it
 * fails the startup instead. A template is refused only when no value of its {@code #{...}} parts could make a name
 * the backend accepts ({@link NameTemplate#samples}); what its parts evaluate to is still checked at each call.
 */
final class StartupNameCheck {

    private StartupNameCheck() {
    }

    /**
     * @param culprit the annotated method and its lease or election, for messages
     * @param literalExample a name every backend accepts, shown in the fix
     * @throws LeaseConfigurationException naming the culprit, the rule the name breaks and the fix
     */
    static void check(LeaseEngine engine, String culprit, LeaseKind kind, NameTemplate name, String literalExample) {
        List<String> samples = name.samples();
        IllegalArgumentException first = null;
        for (String sample : samples) {
            try {
                engine.validateName(culprit, kind, sample);
                return;
            }
            catch (IllegalArgumentException ex) {
                first = first != null ? first : ex;
            }
        }
        if (name.literal() != null) {
            throw new LeaseConfigurationException(culprit + ": the name is refused by the backend " + kind
                    + " leases are routed to, so every call would fail: " + first.getMessage(),
                    "rename it so that it follows that rule, e.g. \"" + literalExample + "\" (lower-case letters, "
                            + "digits and '-' suit every backend).");
        }
        throw new LeaseConfigurationException(culprit + ": the literal parts of the template alone break the rules "
                + "of the backend " + kind + " leases are routed to, whatever its #{...} parts evaluate to, so every "
                + "call would fail. With each #{...} part evaluated to '" + NameTemplate.FILLS.get(0) + "': "
                + first.getMessage(), "change the literal text of the template so that it follows that rule, e.g. \""
                        + literalExample + "-#{#id}\" (lower-case letters, digits and '-' suit every backend).");
    }
}
