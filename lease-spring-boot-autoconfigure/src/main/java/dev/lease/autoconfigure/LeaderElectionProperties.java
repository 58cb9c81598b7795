package dev.lease.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import dev.lease.LeaseKind;

/**
 * Leader elections ({@code lease.leader.*}): settings per election, or elections declared without a @LeaderOnly
 * method.
 */
@ConfigurationProperties("lease.leader")
public class LeaderElectionProperties {

    /**
     * Elections by name. An election a @LeaderOnly method declares needs no entry; an entry sets its ttl and
     * renewal interval, or declares an election only used programmatically (through LeaderElections), which then
     * needs its kind.
     */
    private final Map<String, Election> elections = new LinkedHashMap<>();

    /** Leader settings with their defaults. */
    public LeaderElectionProperties() {
    }

    public Map<String, Election> getElections() {
        return elections;
    }

    /** One election ({@code lease.leader.elections.<name>.*}). */
    public static class Election {

        /**
         * CORRECTNESS or EFFICIENCY: which backend may hold the election. Required unless a @LeaderOnly method names
         * the election, and then it must agree with it.
         */
        private @Nullable LeaseKind kind;

        /** Time to live of each term's lease; lease.default-ttl when unset. */
        private @Nullable Duration ttl;

        /** How often each term's lease is renewed, below half its ttl; lease.renew-every or ttl/3 when unset. */
        private @Nullable Duration renewEvery;

        /** An election with no settings. */
        public Election() {
        }

        public @Nullable LeaseKind getKind() {
            return kind;
        }

        public void setKind(@Nullable LeaseKind kind) {
            this.kind = kind;
        }

        public @Nullable Duration getTtl() {
            return ttl;
        }

        public void setTtl(@Nullable Duration ttl) {
            this.ttl = ttl;
        }

        public @Nullable Duration getRenewEvery() {
            return renewEvery;
        }

        public void setRenewEvery(@Nullable Duration renewEvery) {
            this.renewEvery = renewEvery;
        }
    }
}
