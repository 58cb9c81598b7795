package dev.lease.fence.jpa;

/**
 * The fault suite's fence mutant for JPA: a rule that lets every write through, without the comparison. Handed to
 * Hibernate under {@link FenceColumnIntegrator#RULE_PROPERTY}; the suite's checks must notice the stale writes it
 * lets in.
 */
public final class MutantFenceRule {

    /** The session factory property that replaces the fence's rule. */
    public static final String PROPERTY = FenceColumnIntegrator.RULE_PROPERTY;

    private MutantFenceRule() {
    }

    /** A rule that accepts any token, whatever the row holds. */
    public static Object withoutComparison() {
        return (FenceRule) (stored, token) -> true;
    }
}
