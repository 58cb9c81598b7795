package dev.lease.micrometer;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/** The observations of leases, with their key names: what {@code lease.acquire} timers and spans carry. */
public enum LeaseObservation implements ObservationDocumentation {

    /**
     * One acquire, from the first grant request to the grant, or until the caller stopped waiting. Its timer is
     * {@code lease.acquire}; with a tracer, it is a span named {@code lease acquire}.
     */
    ACQUIRE {
        @Override
        public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
            return DefaultLeaseAcquireObservationConvention.class;
        }

        @Override
        public KeyName[] getLowCardinalityKeyNames() {
            return LowCardinalityKeys.values();
        }

        @Override
        public KeyName[] getHighCardinalityKeyNames() {
            return HighCardinalityKeys.values();
        }
    };

    /** Tags of the {@code lease.acquire} timer: one time series per lease as declared, never per entity. */
    public enum LowCardinalityKeys implements KeyName {

        /** The lease name as declared: {@code invoice-#{#id}}, not {@code invoice-42}. */
        NAME {
            @Override
            public String asString() {
                return "lease.name";
            }
        },

        /** {@code CORRECTNESS} or {@code EFFICIENCY}. */
        KIND {
            @Override
            public String asString() {
                return "lease.kind";
            }
        },

        /** The id of the backend the lease is routed to, such as {@code zookeeper}. */
        BACKEND {
            @Override
            public String asString() {
                return "lease.backend";
            }
        },

        /** {@code acquired}, {@code busy} (held elsewhere for the whole wait) or {@code error}. */
        OUTCOME {
            @Override
            public String asString() {
                return "outcome";
            }
        }
    }

    /** Span attributes only: one value per entity or per grant, too many for a metric tag. */
    public enum HighCardinalityKeys implements KeyName {

        /** The lease name as evaluated for this call: {@code invoice-42}. */
        EVALUATED_NAME {
            @Override
            public String asString() {
                return "lease.evaluated-name";
            }
        },

        /** The fencing token of the grant, on fenced backends when the lease was acquired. */
        TOKEN {
            @Override
            public String asString() {
                return "lease.token";
            }
        }
    }
}
