# spank_fake.sh: sourced by tests/slurm/test_spank.sh and test_spank_attacks.sh.
#
# spank_fake_tree DIR [with-other-irqs]: a fake proc/sys tree for the SPANK
#   plugin's proc_root=DIR/proc sys_root=DIR/sys: mlx5_0..3 at the LLNL Lassen
#   PCI addresses (mlx5_0,1 local to CPUs 0-1, mlx5_2,3 to 2-3), IRQs 40..47
#   (two per HCA) all on CPU 0 (the incident), 4 CPUs online; with
#   "with-other-irqs" also IRQs 0 and 1 (a timer, a disk) of no HCA, on 0-3.
# spank_start_cluster CLUSTER TRIES: "CLUSTER start", waiting a minute at a
#   time (TRIES times) while another cluster runs; prints the start's tail and
#   returns 1 when it fails otherwise.
# spank_slurm_conf ETC: slurm.conf lines for the SPANK plugin's cluster:
#   plugstack.conf in ETC, prep/topognn (which runs the plugin's job start and
#   end inside slurmd) and PrologFlags=Contain (the extern step, whose exit and
#   slurmd's epilog restore IRQs). The caller exports TOPOGNN_PLUGIN_DIRS.

spank_slurm_conf() {
    printf 'PlugStackConfig=%s/plugstack.conf\n' "$1"
    printf 'PrEpPlugins=prep/script,prep/topognn\nPrologFlags=Contain\n'
}

spank_fake_tree() {
    local fake=$1 other=${2:-} irq h k pci dev
    mkdir -p "$fake/proc" "$fake/sys/class/infiniband" "$fake/sys/devices/system/cpu"
    echo 0-3 > "$fake/sys/devices/system/cpu/online"
    {
        printf '           CPU0       CPU1       CPU2       CPU3\n'
        if [[ "$other" == with-other-irqs ]]; then
            for irq in 0 1; do
                mkdir -p "$fake/proc/irq/$irq"
                echo 0-3 > "$fake/proc/irq/$irq/smp_affinity_list"
                printf '%4d: %10d %10d %10d %10d  IO-APIC   %d-edge  other%d\n' "$irq" 5 5 5 5 "$irq" "$irq"
            done
        fi
        irq=40
        for h in 0 1 2 3; do
            case $h in 0) pci=0003:01:00.0 ;; 1) pci=0003:01:00.1 ;; 2) pci=0033:01:00.0 ;; 3) pci=0033:01:00.1 ;; esac
            dev="$fake/sys/devices/pci/$pci"
            mkdir -p "$dev/msi_irqs"
            if (( h < 2 )); then echo 0 > "$dev/numa_node"; echo 0-1 > "$dev/local_cpulist"
            else echo 8 > "$dev/numa_node"; echo 2-3 > "$dev/local_cpulist"; fi
            mkdir -p "$fake/sys/class/infiniband/mlx5_$h"
            ln -s "$dev" "$fake/sys/class/infiniband/mlx5_$h/device"
            for k in 0 1; do
                echo msix > "$dev/msi_irqs/$irq"
                mkdir -p "$fake/proc/irq/$irq"
                echo 0 > "$fake/proc/irq/$irq/smp_affinity_list"
                printf '%4d: %10d %10d %10d %10d  PCI-MSI-edge  mlx5_comp%d@pci:%s\n' \
                    "$irq" 100 0 0 0 "$k" "$pci"
                irq=$(( irq + 1 ))
            done
        done
    } > "$fake/proc/interrupts"
}

spank_start_cluster() {
    local cluster=$1 tries=$2 try out
    for (( try = 1; try <= tries; try++ )); do
        if out=$("$cluster" start 2>&1); then return 0; fi
        if grep -q 'other Slurm daemons run' <<< "$out"; then
            echo "another cluster runs; waiting (try $try of $tries)"
            sleep 60
        else
            printf '%s\n' "$out" | tail -n 30
            return 1
        fi
    done
    return 1
}
