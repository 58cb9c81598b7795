package dev.lease.fence.http.operations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * The shipped alert rules pass {@code promtool check rules} and their unit tests ({@code promtool test rules}): each
 * rule fires when it should and stays silent when it should not. Debian's {@code prometheus} package brings promtool,
 * and {@code .ci/run} installs it; without it these tests are skipped, saying so.
 */
class AlertRulesTest {

    private static final Path RULES = OpsFiles.ROOT.resolve("ops/prometheus");

    @Test
    void theRulesAreValid() throws Exception {
        assertThat(promtool("check", "rules", "lease-alerts.yml")).contains("SUCCESS: 7 rules found");
    }

    @Test
    void everyRuleFiresWhenItShouldAndOnlyThen() throws Exception {
        assertThat(promtool("test", "rules", "lease-alerts.test.yml")).contains("SUCCESS");
    }

    @Test
    void everyRuleHasATestThatFiresItAndASummaryAndDescription() throws IOException {
        String rules = Files.readString(RULES.resolve("lease-alerts.yml"));
        String tests = Files.readString(RULES.resolve("lease-alerts.test.yml"));
        List<String> alerts = rules.lines().filter(line -> line.strip().startsWith("- alert: "))
                .map(line -> line.strip().substring("- alert: ".length())).toList();
        assertThat(alerts).hasSize(7).allSatisfy(alert -> assertThat(tests)
                .as("a case of " + alert + " that expects it to fire")
                .containsPattern("alertname: " + alert + "\\n\\s+exp_alerts:\\n\\s+- exp_labels:"));
        String[] rulesText = rules.split("- alert: ");
        assertThat(java.util.Arrays.asList(rulesText).subList(1, rulesText.length)).hasSize(7)
                .allSatisfy(rule -> assertThat(rule).contains("summary:").contains("description:"));
    }

    private static String promtool(String... arguments) throws IOException, InterruptedException {
        Path promtool = Path.of("/usr/bin/promtool");
        assumeThat(Files.isExecutable(promtool))
                .as("promtool is not installed (apt-get install prometheus); the alert rules are not tested").isTrue();
        List<String> command = new java.util.ArrayList<>(List.of(promtool.toString()));
        command.addAll(List.of(arguments));
        Process process = new ProcessBuilder(command).directory(RULES.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
        assertThat(process.exitValue()).as(String.join(" ", command) + " said:\n" + output).isZero();
        return output;
    }
}
