package dev.lease.leader;

import java.util.Collection;

/** The elections of this application, declared by {@link LeaderOnly} or by {@code lease.leader.elections.*}. */
public interface LeaderElections {

    /**
     * An election of this application.
     *
     * @param election the election name
     * @return its leadership
     * @throws IllegalArgumentException when the application declares no such election
     */
    Leadership get(String election);

    /**
     * Every election of this application.
     *
     * @return the elections, in name order
     */
    Collection<Leadership> all();
}
