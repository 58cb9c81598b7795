package dev.lease.benchmarks;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.metrics.KafkaMetric;
import org.apache.kafka.common.metrics.MetricsReporter;

/**
 * Counts the requests every producer of the run sent, from each one's own {@code request-total} metric (group
 * {@code producer-metrics}); a closed producer's count is kept. Kafka instantiates it per producer
 * ({@code metric.reporters}), so the counts are static.
 */
public final class KafkaRequests implements MetricsReporter {

    private static final Map<KafkaMetric, Boolean> LIVE = new ConcurrentHashMap<>();
    private static final AtomicLong CLOSED = new AtomicLong();

    /** Made by the Kafka client. */
    public KafkaRequests() {
    }

    static long total() {
        long live = 0;
        for (KafkaMetric metric : LIVE.keySet()) {
            live += value(metric);
        }
        return CLOSED.get() + live;
    }

    @Override
    public void configure(Map<String, ?> configs) {
    }

    @Override
    public void init(List<KafkaMetric> metrics) {
        metrics.forEach(this::metricChange);
    }

    @Override
    public void metricChange(KafkaMetric metric) {
        if (metric.metricName().name().equals("request-total")
                && metric.metricName().group().equals("producer-metrics")) {
            LIVE.put(metric, Boolean.TRUE);
        }
    }

    @Override
    public void metricRemoval(KafkaMetric metric) {
        if (LIVE.remove(metric) != null) {
            CLOSED.addAndGet(value(metric));
        }
    }

    @Override
    public void close() {
    }

    private static long value(KafkaMetric metric) {
        return metric.metricValue() instanceof Number n ? (long) n.doubleValue() : 0;
    }
}
