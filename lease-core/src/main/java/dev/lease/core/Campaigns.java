package dev.lease.core;

/**
 * A leadership whose campaign may be replaced (an election of a Spring context that was stopped and started again):
 * the reactive twin of {@code @LeaderOnly} asks it for the campaign running at subscription.
 */
public interface Campaigns {

    /**
     * The campaign running now.
     *
     * @return the election campaigning now, or null while none does
     */
    Election running();
}
